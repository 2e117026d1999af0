from numerix.cli import main

raise SystemExit(main())

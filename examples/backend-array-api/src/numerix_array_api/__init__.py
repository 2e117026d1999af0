"""An example numerix backend over array-api-strict (see README.md)."""

/* numerix._speedups: the compiled fast path of Tensor's operators and of the hot ops.
 *
 * What this module holds is a memo, not a second set of rules (docs/decisions.md 38).
 * An Op wraps one public op (its Python function, the fallback) and the primitive it
 * binds. Called with operands of a form it knows (two tensors of one backend, dtype
 * and shape; a tensor and a Python float; one tensor; two matrices; a tensor and a
 * shape), it looks up what the Python rules decided for that (backend, dtype, form)
 * the first time they were asked (numerix.ops._fast.resolve): the backend's kernel and
 * the output's dtype, or "not this way". It then does what the Python op does after its
 * rules: builds the output tensor and calls the kernel. Anything else, and any error,
 * goes to the Python function, which is the reference: it raises the named errors.
 *
 * TensorBase holds Tensor's four fields in C and gives Tensor the operators + - * / @,
 * x[key], reshape and the reductions over every axis (x.sum(), prod, max, min, all, any)
 * without a Python frame; numerix._tensor.Tensor subclasses it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <string.h>

/* ------------------------------------------------------------------ module state */
/* One interpreter, one numerix: the state is set once by configure(). */

static PyTypeObject *TensorType = NULL; /* numerix._tensor.Tensor, the exact type served */
static PyObject *Resolver = NULL;       /* resolve(primitive, form, backend, dtype, params) */
static PyObject *ScalarOperand = NULL;  /* scalar_operand(value, dtype, backend) */
static PyObject *IntOperand = NULL;     /* int_operand(primitive, value, dtype, backend) */
static PyObject *Declined = NULL;       /* what a shortcut raises for "call the kernel" */
static PyObject *Ops = NULL;            /* the namespace Tensor's operators call */
static PyObject *ReshapeFallback = NULL;
static PyObject *GetitemFallback = NULL;
/* Tensor's reductions served over every axis: x.sum(), ... (tensor_reduction) */
enum { RD_SUM, RD_PROD, RD_MAX, RD_MIN, RD_ALL, RD_ANY, N_REDUCTIONS };
static const char *REDUCTION_NAMES[N_REDUCTIONS] = {"sum", "prod", "max", "min", "all", "any"};
static PyObject *ReductionFallbacks[N_REDUCTIONS]; /* Tensor's Python methods */
static unsigned long Generation = 1;   /* bumped by clear(): every Op's memo is dropped */

/* made once, by the module's exec; never freed (the module may be imported again) */
static PyObject *One = NULL;            /* 1, for jit's hit count */
static PyObject *str_add, *str_subtract, *str_multiply, *str_divide, *str_matmul;

/* ------------------------------------------------------------------ TensorBase */

typedef struct {
    PyObject_HEAD
    PyObject *data;
    PyObject *shape;
    PyObject *dtype;
    PyObject *backend;
    PyObject *weakreflist;
    PyObject *sig; /* jit's Signature of this tensor, made on first use (signature()) */
} TensorObject;

static PyTypeObject TensorBaseType;

static int
tensor_traverse(TensorObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->data);
    Py_VISIT(self->shape);
    Py_VISIT(self->dtype);
    Py_VISIT(self->backend);
    Py_VISIT(self->sig);
    /* not Py_TYPE(self): Tensor, a heap subclass, has it visited by subtype_traverse */
    return 0;
}

static int
tensor_clear(TensorObject *self)
{
    Py_CLEAR(self->data);
    Py_CLEAR(self->shape);
    Py_CLEAR(self->dtype);
    Py_CLEAR(self->backend);
    Py_CLEAR(self->sig);
    return 0;
}

static void
tensor_dealloc(TensorObject *self)
{
    PyObject_GC_UnTrack(self);
    if (self->weakreflist != NULL) {
        PyObject_ClearWeakRefs((PyObject *)self);
    }
    tensor_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The four fields are slots, read as slots are (CPython specialises `x.shape` on a member
 * descriptor; a getter would be a call per read, which every op of the Python path pays
 * several times). Writes go through the type's setattro, which keeps the rules: no field
 * is deleted, and shape and dtype, once set, are fixed (the Python ops set all four on a
 * tensor they have just made and never again). data and backend stay writable: the
 * kernels fill out.data, backend_deallocate and autodiff's custom_grad swap both. The
 * member descriptors themselves can still write past these rules
 * (TensorBase.shape.__set__): the fast path holds what it reads (Fields, below), so even
 * then nothing is read freed or NULL. */
enum { FIELD_DATA, FIELD_SHAPE, FIELD_DTYPE, FIELD_BACKEND, FIELD_COUNT };
static const char *FIELD_NAMES[] = {"data", "shape", "dtype", "backend"};
static PyObject *field_names[FIELD_COUNT];  /* interned, made once per process */

static PyObject **
field_slot(TensorObject *self, int which)
{
    switch (which) {
    case FIELD_DATA: return &self->data;
    case FIELD_SHAPE: return &self->shape;
    case FIELD_DTYPE: return &self->dtype;
    default: return &self->backend;
    }
}

static int
field_of(PyObject *name)
{
    for (int i = 0; i < FIELD_COUNT; i++) {
        if (name == field_names[i]) {
            return i;
        }
    }
    if (PyUnicode_Check(name)) {  /* a name built at run time is not the interned one */
        for (int i = 0; i < FIELD_COUNT; i++) {
            if (PyUnicode_CompareWithASCIIString(name, FIELD_NAMES[i]) == 0) {
                return i;
            }
        }
    }
    return -1;
}

static int
tensor_setattro(TensorObject *self, PyObject *name, PyObject *value)
{
    int which = field_of(name);
    if (which < 0) {
        return PyObject_GenericSetAttr((PyObject *)self, name, value);
    }
    PyObject **slot = field_slot(self, which);
    if (value == NULL) {
        PyErr_Format(PyExc_AttributeError,
                     "cannot delete Tensor.%s: a tensor always has its data, shape, dtype and "
                     "backend; numerix.backend_deallocate(t) frees its memory",
                     FIELD_NAMES[which]);
        return -1;
    }
    if (*slot != NULL && (which == FIELD_SHAPE || which == FIELD_DTYPE)) {
        PyObject *described = PyObject_CallMethod((PyObject *)self, "describe", NULL);
        if (described == NULL) {
            return -1;
        }
        PyErr_Format(PyExc_AttributeError,
                     "cannot set Tensor.%s of %U to %R: a tensor's shape and dtype are fixed "
                     "when it is made; make a new tensor (numerix.reshape, Tensor.astype)",
                     FIELD_NAMES[which], described, value);
        Py_DECREF(described);
        return -1;
    }
    Py_INCREF(value);
    Py_XSETREF(*slot, value);
    return 0;
}

static PyMemberDef tensor_members[] = {
    {"data", T_OBJECT_EX, offsetof(TensorObject, data), 0, "the backend's native array"},
    {"shape", T_OBJECT_EX, offsetof(TensorObject, shape), 0,
     "the shape, a tuple of ints (set once)"},
    {"dtype", T_OBJECT_EX, offsetof(TensorObject, dtype), 0, "the numerix dtype (set once)"},
    {"backend", T_OBJECT_EX, offsetof(TensorObject, backend), 0, "the backend holding data"},
    {"__weaklistoffset__", T_PYSSIZET, offsetof(TensorObject, weakreflist), READONLY, NULL},
    {NULL}
};

/* What the fast path reads of a tensor: its four fields, held (strong references) for
 * the length of one call, so Python code the call runs (a resolver, a kernel, another
 * thread) may set a field without the C code reading a freed object. */
typedef struct {
    PyObject *data;
    PyObject *shape;
    PyObject *dtype;
    PyObject *backend;
} Fields;

/* 1 and f filled when o is a Tensor of the type served with its fields set and a tuple
 * for shape; else 0, nothing held. */
static int
fields_of(PyObject *o, Fields *f)
{
    if (Py_TYPE(o) != TensorType) {
        return 0;
    }
    TensorObject *t = (TensorObject *)o;
    if (t->data == NULL || t->shape == NULL || t->dtype == NULL || t->backend == NULL
        || !PyTuple_CheckExact(t->shape)) {
        return 0;
    }
    f->data = t->data;
    f->shape = t->shape;
    f->dtype = t->dtype;
    f->backend = t->backend;
    Py_INCREF(f->data);
    Py_INCREF(f->shape);
    Py_INCREF(f->dtype);
    Py_INCREF(f->backend);
    return 1;
}

static void
fields_release(Fields *f)
{
    Py_CLEAR(f->data);
    Py_CLEAR(f->shape);
    Py_CLEAR(f->dtype);
    Py_CLEAR(f->backend);
}

/* A new Tensor with data None, as the Python ops build their output. */
static PyObject *
new_out(PyObject *shape, PyObject *dtype, PyObject *backend)
{
    TensorObject *t = (TensorObject *)TensorType->tp_alloc(TensorType, 0);
    if (t == NULL) {
        return NULL;
    }
    Py_INCREF(Py_None);
    t->data = Py_None;
    Py_INCREF(shape);
    t->shape = shape;
    Py_INCREF(dtype);
    t->dtype = dtype;
    Py_INCREF(backend);
    t->backend = backend;
    return (PyObject *)t;
}

static inline int
is_tensor(PyObject *o)
{
    if (Py_TYPE(o) != TensorType) {
        return 0;
    }
    TensorObject *t = (TensorObject *)o;
    return t->data != NULL && t->shape != NULL && t->dtype != NULL && t->backend != NULL
           && PyTuple_CheckExact(t->shape);
}

/* ------------------------------------------------------------------ Op */

enum {
    FORM_TT, FORM_TS, FORM_ST, FORM_TI, FORM_IT, FORM_U, FORM_MM, FORM_RS, FORM_SL, FORM_IX,
    FORM_RD, FORM_T0, FORM_0T, N_FORMS
};
static const char *FORM_NAMES[N_FORMS] = {"tt", "ts", "st", "ti", "it", "u", "mm", "rs", "sl",
                                          "ix", "rd", "t0", "0t"};
static PyObject *FormNames[N_FORMS]; /* the same, interned: what the resolver is told */

#define MEMO 32  /* kernels per op; past it the oldest one is replaced */
#define PLANS 16 /* shape plans per op, replaced alike */
#define MAX_KW 6 /* keyword arguments a plan may pass a kernel */
#define SCALARS 4 /* Python scalars per entry whose operands are kept (a loop's constants) */

typedef struct {
    PyObject *backend;  /* strong: an entry keeps its backend alive, as a plan does */
    PyObject *dtype;
    int form;
    PyObject *kernel;   /* the backend's kernel function (unbound), or NULL: not this way */
    PyObject *name;     /* its name on the backend's class, checked on every use */
    PyObject *odt;      /* the output's dtype */
    PyObject *payload;  /* the backend's shortcut (Backend.fast_kernel), or NULL */
    PyTypeObject *payload_type; /* what a payload it returns is: anything else, the kernel */
    PyObject *context;  /* the contextvars.Context the shortcut runs in, or NULL */
    PyObject *as_payload; /* Backend.scalar_payload: a 0-d result of another type made a
                           * payload (numpy's scalars, as arrays), or NULL */
    int payload_0d;     /* cleared when a 0-d call gave something else: 0-d skips it */
    PyObject *scalar[SCALARS];  /* the last Python floats or ints of a scalar form ... */
    PyObject *operand[SCALARS]; /* ... and the 0-d operands the rules made of them */
    int scalar_victim;          /* the pair a full set replaces next */
} Entry;

/* What the op's Python planner decided for one (form, shapes, key): the plan, or NULL for
 * "the Python op takes it". A plan is (out's shape, or None: the answer is x itself; the
 * kernel's keyword names and values, or None for no kernel call; what the shortcut takes
 * after the payloads, or None). x[i]'s is every row's: its last part is (lo, hi, shift),
 * the ints i it holds for, lo <= i < hi, and what a negative i is shifted by to give the
 * row the shortcut takes. The C code compares keys, it does not read shapes. */
typedef struct {
    int form;
    PyObject *key[4]; /* the first operand's shape, then the form's other parts, or NULL */
    PyObject *plan;
    long long bounds[3]; /* x[i]'s (lo, hi, shift), read from the plan as it is kept */
} Plan;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *primitive;
    PyObject *fallback;
    PyObject *params;   /* what the resolver is told besides the primitive (a kind), or None */
    PyObject *planner;  /* planner(form, x, arg) -> plan or None, or None: no planned form */
    PyObject *dict;
    PyObject *weakreflist;
    int arity;
    int n;
    int victim; /* the entry a full memo replaces next */
    int nplans;
    int plan_victim;
    unsigned long generation;
    Entry memo[MEMO];
    Plan plans[PLANS];
} OpObject;

static PyTypeObject OpType;

/* Python code the fast path ran raised: an Exception is dropped (1: the Python op takes
 * the call and raises its own named error); anything else, KeyboardInterrupt or
 * SystemExit, stays set (0: it goes up as it is). */
static int
drop_exception(void)
{
    if (PyErr_ExceptionMatches(PyExc_Exception)) {
        PyErr_Clear();
        return 1;
    }
    return 0;
}

static void
entry_clear(Entry *e)
{
    Py_CLEAR(e->backend);
    Py_CLEAR(e->dtype);
    Py_CLEAR(e->kernel);
    Py_CLEAR(e->name);
    Py_CLEAR(e->odt);
    Py_CLEAR(e->payload);
    Py_CLEAR(e->payload_type);
    Py_CLEAR(e->context);
    Py_CLEAR(e->as_payload);
    for (int i = 0; i < SCALARS; i++) {
        Py_CLEAR(e->scalar[i]);
        Py_CLEAR(e->operand[i]);
    }
    e->scalar_victim = 0;
}

static void
plan_clear(Plan *p)
{
    for (int k = 0; k < 4; k++) {
        Py_CLEAR(p->key[k]);
    }
    Py_CLEAR(p->plan);
}

static void
memo_clear(OpObject *op)
{
    for (int i = 0; i < op->n; i++) {
        entry_clear(&op->memo[i]);
    }
    for (int i = 0; i < op->nplans; i++) {
        plan_clear(&op->plans[i]);
    }
    op->n = op->victim = 0;
    op->nplans = op->plan_victim = 0;
}

/* Drop the memos when clear() was called since this op last looked. */
static inline void
refresh(OpObject *op)
{
    if (op->generation != Generation) {
        memo_clear(op);
        op->generation = Generation;
    }
}

/* What a call uses of an entry, with strong references: the entry itself may be
 * dropped while the kernel runs (Python code it runs may call the op again, or clear
 * the memos), so no call holds a pointer into the memo across Python code. */
typedef struct {
    OpObject *op;
    int form;
    int payload_0d;
    PyObject *backend;
    PyObject *dtype;
    PyObject *kernel;
    PyObject *odt;
    PyObject *payload;
    PyTypeObject *payload_type;
    PyObject *context;
    PyObject *as_payload;
} Hit;

static void
hit_release(Hit *h)
{
    Py_CLEAR(h->backend);
    Py_CLEAR(h->dtype);
    Py_CLEAR(h->kernel);
    Py_CLEAR(h->odt);
    Py_CLEAR(h->payload);
    Py_CLEAR(h->payload_type);
    Py_CLEAR(h->context);
    Py_CLEAR(h->as_payload);
}

/* The entry for (backend, dtype, form) as the memo holds it now, or NULL. */
static Entry *
find_entry(OpObject *op, PyObject *backend, PyObject *dtype, int form)
{
    refresh(op);
    for (int i = 0; i < op->n; i++) {
        Entry *m = &op->memo[i];
        if (m->backend == backend && m->dtype == dtype && m->form == form) {
            return m;
        }
    }
    return NULL;
}

/* Drop entry i, the last one taking its place. */
static void
memo_remove(OpObject *op, int i)
{
    entry_clear(&op->memo[i]);
    op->n--;
    if (i != op->n) {
        op->memo[i] = op->memo[op->n];
        memset(&op->memo[op->n], 0, sizeof(Entry));
    }
}

static int
hit_from(Hit *h, OpObject *op, Entry *e)
{
    if (e->kernel == NULL) {
        return 0;
    }
    h->op = op;
    h->form = e->form;
    h->payload_0d = e->payload_0d;
    Py_INCREF(e->backend);
    h->backend = e->backend;
    Py_INCREF(e->dtype);
    h->dtype = e->dtype;
    Py_INCREF(e->kernel);
    h->kernel = e->kernel;
    Py_INCREF(e->odt);
    h->odt = e->odt;
    Py_XINCREF(e->payload);
    h->payload = e->payload;
    Py_XINCREF(e->payload_type);
    h->payload_type = e->payload_type;
    Py_XINCREF(e->context);
    h->context = e->context;
    Py_XINCREF(e->as_payload);
    h->as_payload = e->as_payload;
    return 1;
}

/* Fill *h for (backend, dtype, form), asking the resolver on a miss: 1; 0 for "not this
 * way" (or the resolver raised an Exception, which the Python op will raise too); -1 with
 * anything else the resolver raised (KeyboardInterrupt), to go up. */
static int
lookup(OpObject *op, PyObject *backend, PyObject *dtype, int form, Hit *h)
{
    memset(h, 0, sizeof(Hit));
    refresh(op);
    for (int i = 0; i < op->n; i++) {
        Entry *m = &op->memo[i];
        if (m->backend == backend && m->dtype == dtype && m->form == form) {
            if (m->kernel == NULL) {
                return 0;
            }
            /* the kernel is still the class's: one replaced since (the rule check wraps
               them all, a test patches one) is resolved again */
            if (_PyType_Lookup(Py_TYPE(backend), m->name) == m->kernel) {
                return hit_from(h, op, m);
            }
            memo_remove(op, i);
            break;
        }
    }
    if (Resolver == NULL) {
        return 0;
    }
    PyObject *args[5] = {op->primitive, FormNames[form], backend, dtype, op->params};
    PyObject *r = PyObject_Vectorcall(Resolver, args, 5, NULL);
    if (r == NULL) {
        return drop_exception() ? 0 : -1;
    }
    PyObject *kernel = NULL, *name = NULL, *odt = NULL, *payload = NULL, *ptype = NULL;
    PyObject *context = NULL, *as_payload = NULL;
    if (r != Py_None) {
        if (!PyTuple_CheckExact(r) || PyTuple_GET_SIZE(r) != 7
            || !PyUnicode_CheckExact(PyTuple_GET_ITEM(r, 1))) {
            Py_DECREF(r);
            return 0;
        }
        kernel = PyTuple_GET_ITEM(r, 0);
        name = PyTuple_GET_ITEM(r, 1);
        odt = PyTuple_GET_ITEM(r, 2);
        payload = PyTuple_GET_ITEM(r, 3);
        ptype = PyTuple_GET_ITEM(r, 4);
        context = PyTuple_GET_ITEM(r, 5);
        as_payload = PyTuple_GET_ITEM(r, 6);
        if (payload == Py_None || !PyType_Check(ptype)) {
            payload = ptype = context = as_payload = NULL;
        }
        else {
            if (!PyContext_CheckExact(context)) {
                context = NULL;
            }
            if (!PyCallable_Check(as_payload)) {
                as_payload = NULL;
            }
        }
    }
    /* the resolver ran Python code: the memo may have changed meanwhile */
    Entry *e = find_entry(op, backend, dtype, form);
    if (e == NULL && op->n == MEMO) { /* full: the entries are replaced in turn */
        e = &op->memo[op->victim];
        op->victim = (op->victim + 1) % MEMO;
    }
    if (e == NULL) {
        e = &op->memo[op->n++];
    }
    else {
        entry_clear(e);
    }
    Py_INCREF(backend);
    e->backend = backend;
    Py_INCREF(dtype);
    e->dtype = dtype;
    e->form = form;
    Py_XINCREF(kernel);
    e->kernel = kernel;
    Py_XINCREF(name);
    e->name = name;
    Py_XINCREF(odt);
    e->odt = odt;
    Py_XINCREF(payload);
    e->payload = payload;
    Py_XINCREF(ptype);
    e->payload_type = (PyTypeObject *)ptype;
    Py_XINCREF(context);
    e->context = context;
    Py_XINCREF(as_payload);
    e->as_payload = as_payload;
    e->payload_0d = 1;
    Py_DECREF(r);
    return hit_from(h, op, e);
}

/* Whether a and b are the same plan key part: the same object, or ints (exactly) of one
 * value, or tuples (exactly) of such parts. Nothing else compares: no Python code runs. */
static int
same_key(PyObject *a, PyObject *b)
{
    if (a == b) {
        return 1;
    }
    if (a == NULL || b == NULL || Py_TYPE(a) != Py_TYPE(b)) {
        return 0;
    }
    if (PyLong_CheckExact(a)) {
        return PyObject_RichCompareBool(a, b, Py_EQ) == 1;
    }
    if (PyTuple_CheckExact(a)) {
        Py_ssize_t n = PyTuple_GET_SIZE(a);
        if (PyTuple_GET_SIZE(b) != n) {
            return 0;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            if (!same_key(PyTuple_GET_ITEM(a, i), PyTuple_GET_ITEM(b, i))) {
                return 0;
            }
        }
        return 1;
    }
    return 0;
}

static Plan *
find_plan(OpObject *op, int form, PyObject *const *key)
{
    refresh(op);
    for (int i = 0; i < op->nplans; i++) {
        Plan *p = &op->plans[i];
        if (p->form == form && same_key(p->key[0], key[0]) && same_key(p->key[1], key[1])
            && same_key(p->key[2], key[2]) && same_key(p->key[3], key[3])) {
            return p;
        }
    }
    return NULL;
}

/* Whether o is an exact int that fits a long long, stored in *v. */
static int
long_long_of(PyObject *o, long long *v)
{
    int overflow;
    if (!PyLong_CheckExact(o)) {
        return 0;
    }
    *v = PyLong_AsLongLongAndOverflow(o, &overflow);
    return !overflow;
}

/* Whether r is a plan of `form` as the C code reads it (see Plan); x[i]'s bounds are
 * stored in bounds. */
static int
plan_is_valid(int form, PyObject *r, long long *bounds)
{
    if (!PyTuple_CheckExact(r) || PyTuple_GET_SIZE(r) != 4) {
        return 0;
    }
    PyObject *out = PyTuple_GET_ITEM(r, 0), *names = PyTuple_GET_ITEM(r, 1);
    PyObject *values = PyTuple_GET_ITEM(r, 2), *extra = PyTuple_GET_ITEM(r, 3);
    if (out != Py_None && !PyTuple_CheckExact(out)) {
        return 0;
    }
    if (form == FORM_IX) {
        return out != Py_None && names == Py_None && values == Py_None
               && PyTuple_CheckExact(extra) && PyTuple_GET_SIZE(extra) == 3
               && long_long_of(PyTuple_GET_ITEM(extra, 0), &bounds[0])
               && long_long_of(PyTuple_GET_ITEM(extra, 1), &bounds[1])
               && long_long_of(PyTuple_GET_ITEM(extra, 2), &bounds[2]);
    }
    if (names == Py_None) {
        return values == Py_None || (PyTuple_CheckExact(values) && PyTuple_GET_SIZE(values) == 0);
    }
    return PyTuple_CheckExact(names) && PyTuple_CheckExact(values)
           && PyTuple_GET_SIZE(names) == PyTuple_GET_SIZE(values)
           && PyTuple_GET_SIZE(names) <= MAX_KW;
}

/* The plan of `key` (form's parts, NULL where unused) for the operand x and the form's
 * argument arg, asking the op's planner on a miss: 1 with *plan (a new reference) and, for
 * x[i], its bounds copied; 0 for the Python op; -1 with an error that goes up (as
 * lookup's). */
static int
plan_for(OpObject *op, int form, PyObject *const *key, PyObject *x, PyObject *arg,
         PyObject **plan, long long *bounds)
{
    *plan = NULL;
    Plan *p = find_plan(op, form, key);
    if (p != NULL) {
        Py_XINCREF(p->plan);
        *plan = p->plan;
        memcpy(bounds, p->bounds, sizeof p->bounds);
        return p->plan != NULL;
    }
    if (op->planner == NULL || op->planner == Py_None) {
        return 0;
    }
    PyObject *args[3] = {FormNames[form], x, arg};
    PyObject *r = PyObject_Vectorcall(op->planner, args, 3, NULL);
    if (r == NULL) {
        return drop_exception() ? 0 : -1; /* not kept: the Python op raises it again */
    }
    long long parsed[3] = {0, 0, 0};
    if (r != Py_None && !plan_is_valid(form, r, parsed)) {
        Py_DECREF(r);
        PyErr_Format(PyExc_TypeError, "the planner of %R gave a plan that is not "
                     "(shape, kwnames, kwvalues, extra), or for x[i] (shape, None, None, "
                     "(lo, hi, shift))", (PyObject *)op);
        return -1;
    }
    /* the planner ran Python code: the plans may have changed meanwhile */
    p = find_plan(op, form, key);
    if (p == NULL && op->nplans == PLANS) {
        p = &op->plans[op->plan_victim];
        op->plan_victim = (op->plan_victim + 1) % PLANS;
    }
    if (p == NULL) {
        p = &op->plans[op->nplans++];
    }
    plan_clear(p);
    p->form = form;
    for (int k = 0; k < 4; k++) {
        Py_XINCREF(key[k]);
        p->key[k] = key[k];
    }
    if (r == Py_None) {
        Py_DECREF(r);
        return 0;
    }
    p->plan = r; /* the plan's reference; *plan gets one more */
    memcpy(p->bounds, parsed, sizeof parsed);
    memcpy(bounds, parsed, sizeof parsed);
    Py_INCREF(r);
    *plan = r;
    return 1;
}

/* Whether the Python scalars v and k are the same operand: floats bit for bit (0.0 and
 * -0.0 differ, a NaN is itself), ints by value. */
static int
same_scalar(PyObject *v, PyObject *k)
{
    if (k == NULL || Py_TYPE(v) != Py_TYPE(k)) {
        return 0;
    }
    if (v == k) {
        return 1;
    }
    if (PyFloat_CheckExact(v)) {
        double a = PyFloat_AS_DOUBLE(v), b = PyFloat_AS_DOUBLE(k);
        return memcmp(&a, &b, sizeof a) == 0;
    }
    return same_key(v, k); /* exact ints */
}

/* The 0-d operand of the Python float or int v, as the rules make it (scalar_operand;
 * an int is checked to fit an integer dtype first, by int_operand), kept in the entry
 * for the last SCALARS values: a loop multiplies by the same few constants (x * 0.5 and
 * s * 0.001 share an entry). A new reference, or NULL with an error: an Exception the
 * Python op raises too, or one that goes up. */
static PyObject *
scalar_for(Hit *h, PyObject *v)
{
    Entry *e = find_entry(h->op, h->backend, h->dtype, h->form);
    for (int i = 0; e != NULL && i < SCALARS; i++) {
        if (e->operand[i] != NULL && same_scalar(v, e->scalar[i])) {
            Py_INCREF(e->operand[i]);
            return e->operand[i];
        }
    }
    PyObject *t;
    if (PyFloat_CheckExact(v)) {
        PyObject *args[3] = {v, h->dtype, h->backend};
        t = PyObject_Vectorcall(ScalarOperand, args, 3, NULL);
    }
    else {
        PyObject *args[4] = {h->op->primitive, v, h->dtype, h->backend};
        t = PyObject_Vectorcall(IntOperand, args, 4, NULL);
    }
    if (t == NULL) {
        return NULL;
    }
    if (Py_TYPE(t) != TensorType) {
        Py_DECREF(t);
        PyErr_SetString(PyExc_TypeError, "scalar_operand did not return a Tensor");
        return NULL;
    }
    e = find_entry(h->op, h->backend, h->dtype, h->form); /* after Python code: again */
    if (e != NULL) {
        int i = e->scalar_victim;
        PyObject *old_t = e->operand[i], *old_v = e->scalar[i];
        e->scalar_victim = (i + 1) % SCALARS;
        Py_INCREF(t);
        e->operand[i] = t;
        Py_INCREF(v);
        e->scalar[i] = v;
        Py_XDECREF(old_t); /* last: a tensor going may run Python code */
        Py_XDECREF(old_v);
    }
    return t;
}

/* f(args) in the context ctx (NULL: as it is). NULL with an error from f; with *busy set
 * and no error when ctx is in use (by another thread, or by a kernel of this one). */
static PyObject *
call_in(PyObject *ctx, PyObject *f, PyObject *const *args, Py_ssize_t n, int *busy)
{
    *busy = 0;
    if (ctx == NULL) {
        return PyObject_Vectorcall(f, args, n, NULL);
    }
    if (PyContext_Enter(ctx) < 0) {
        if (drop_exception()) {
            *busy = 1;
        }
        return NULL;
    }
    PyObject *r = PyObject_Vectorcall(f, args, n, NULL);
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *exc = PyErr_GetRaisedException();
    if (PyContext_Exit(ctx) < 0) {
        Py_CLEAR(r);
        Py_XDECREF(exc);
        return NULL;
    }
    PyErr_SetRaisedException(exc);
#else
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (PyContext_Exit(ctx) < 0) {
        Py_CLEAR(r);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return NULL;
    }
    PyErr_Restore(type, value, tb);
#endif
    return r;
}

/* The backend's shortcut on the payloads `args` (Backend.fast_kernel): 1 with *result
 * the output, or NULL and the shortcut's error (raised as it is: the shortcut is the
 * kernel's own computation, so the kernel would raise it too); 0 to call the kernel
 * instead (no shortcut, its context in use, ShortcutDeclined, or a payload of another
 * type). */
static int
try_payload(Hit *h, PyObject *shape, PyObject *const *args, Py_ssize_t n, PyObject **result)
{
    int zero_d = PyTuple_GET_SIZE(shape) == 0;
    if (h->payload == NULL || (zero_d && !h->payload_0d)) {
        return 0;
    }
    int busy;
    PyObject *r = call_in(h->context, h->payload, args, n, &busy);
    if (r == NULL) {
        if (busy) {
            return 0;
        }
        if (Declined != NULL && PyErr_ExceptionMatches(Declined)) {
            PyErr_Clear();
            return 0;
        }
        *result = NULL;
        return 1;
    }
    if (Py_TYPE(r) != h->payload_type && zero_d && h->as_payload != NULL) {
        /* numpy's ufuncs give scalars for 0-d operands: the backend makes them payloads */
        Py_SETREF(r, PyObject_CallOneArg(h->as_payload, r));
        if (r == NULL) {
            *result = NULL;
            return 1;
        }
    }
    if (Py_TYPE(r) != h->payload_type) {
        Py_DECREF(r);
        if (zero_d) { /* numpy's ufuncs give scalars for 0-d: the kernel fills, from now */
            Entry *e = find_entry(h->op, h->backend, h->dtype, h->form);
            if (e != NULL) {
                e->payload_0d = 0;
            }
        }
        return 0;
    }
    *result = new_out(shape, h->odt, h->backend);
    if (*result == NULL) {
        Py_DECREF(r);
        return 1;
    }
    Py_SETREF(((TensorObject *)*result)->data, r);
    return 1;
}

/* The output of `shape` through the hit: its shortcut on the payloads `pargs`, else its
 * kernel on the tensors `kargs` (NULL: none, the Python op takes it; *taken = 0) with the
 * keyword arguments `kwnames`/`kwvalues` (tuples, or None). NULL with an error: the
 * kernel's or the shortcut's, raised as it is, never run a second time by the Python op. */
static PyObject *
call_kernel(Hit *h, PyObject *shape, PyObject *const *pargs, Py_ssize_t np,
            PyObject *const *kargs, Py_ssize_t nk, PyObject *kwnames, PyObject *kwvalues,
            int *taken)
{
    PyObject *r = NULL;
    *taken = 1;
    if (try_payload(h, shape, pargs, np, &r)) {
        return r;
    }
    if (kargs == NULL) {
        *taken = 0;
        return NULL;
    }
    PyObject *out = new_out(shape, h->odt, h->backend);
    if (out == NULL) {
        return NULL;
    }
    PyObject *args[4 + MAX_KW] = {h->backend, out};
    Py_ssize_t na = 2;
    for (Py_ssize_t i = 0; i < nk && i < 2; i++) {
        args[na++] = kargs[i];
    }
    Py_ssize_t nkw = kwnames == NULL || kwnames == Py_None ? 0 : PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t i = 0; i < nkw; i++) {
        args[na + i] = PyTuple_GET_ITEM(kwvalues, i);
    }
    r = PyObject_Vectorcall(h->kernel, args, na, nkw ? kwnames : NULL);
    Py_DECREF(out);
    return r;
}

/* The tensor t (fields f) and the Python float or int v, v on the left when `left`: the
 * kernel on t and the 0-d operand the rules make of v. */
static PyObject *
fast_scalar(OpObject *op, PyObject *t, Fields *f, PyObject *v, int left, int *taken)
{
    int form = PyFloat_CheckExact(v) ? (left ? FORM_ST : FORM_TS) : (left ? FORM_IT : FORM_TI);
    Hit h;
    int found = lookup(op, f->backend, f->dtype, form, &h);
    if (found <= 0) {
        *taken = found < 0;
        return NULL;
    }
    PyObject *r = NULL, *s = scalar_for(&h, v);
    Fields sf;
    if (s == NULL) {
        *taken = !drop_exception(); /* an Exception: the Python op says what is wrong */
    }
    else if (!fields_of(s, &sf)) {
        *taken = 0;
    }
    else {
        PyObject *pargs[2] = {left ? sf.data : f->data, left ? f->data : sf.data};
        PyObject *kargs[2] = {left ? s : t, left ? t : s};
        r = call_kernel(&h, f->shape, pargs, 2, kargs, 2, NULL, NULL, taken);
        fields_release(&sf);
    }
    Py_XDECREF(s);
    hit_release(&h);
    return r;
}

/* Two tensors of one backend and dtype, of one shape, or one of them 0-d (t0, 0t: the
 * shortcut alone, on the payloads as the scalar forms pass them, the output the other's
 * shape as for a Python scalar's 0-d operand; with no shortcut the Python op broadcasts). */
static PyObject *
fast_pair(OpObject *op, PyObject *a, Fields *x, PyObject *b, Fields *y, int *taken)
{
    if (x->backend != y->backend || x->dtype != y->dtype) {
        return NULL;
    }
    int form = FORM_TT;
    PyObject *shape = x->shape;
    if (!same_key(x->shape, y->shape)) {
        if (PyTuple_GET_SIZE(y->shape) == 0) {
            form = FORM_T0;
        }
        else if (PyTuple_GET_SIZE(x->shape) == 0) {
            form = FORM_0T;
            shape = y->shape;
        }
        else {
            return NULL;
        }
    }
    Hit h;
    int found = lookup(op, x->backend, x->dtype, form, &h);
    if (found <= 0) {
        *taken = found < 0;
        return NULL;
    }
    PyObject *pargs[2] = {x->data, y->data}, *kargs[2] = {a, b};
    PyObject *r = call_kernel(&h, shape, pargs, 2, form == FORM_TT ? kargs : NULL, 2, NULL, NULL,
                              taken);
    hit_release(&h);
    return r;
}

static PyObject *
fast_binary(OpObject *op, PyObject *a, PyObject *b, int *taken)
{
    Fields x, y;
    PyObject *r = NULL;
    if (fields_of(a, &x)) {
        if (fields_of(b, &y)) {
            r = fast_pair(op, a, &x, b, &y, taken);
            fields_release(&y);
        }
        else if (PyFloat_CheckExact(b) || PyLong_CheckExact(b)) {
            r = fast_scalar(op, a, &x, b, 0, taken);
        }
        fields_release(&x);
    }
    else if ((PyFloat_CheckExact(a) || PyLong_CheckExact(a)) && fields_of(b, &y)) {
        r = fast_scalar(op, b, &y, a, 1, taken);
        fields_release(&y);
    }
    return r;
}

static PyObject *
fast_unary(OpObject *op, PyObject *a, int *taken)
{
    Fields x;
    if (!fields_of(a, &x)) {
        return NULL;
    }
    Hit h;
    PyObject *r = NULL;
    int found = lookup(op, x.backend, x.dtype, FORM_U, &h);
    if (found > 0) {
        r = call_kernel(&h, x.shape, &x.data, 1, &a, 1, NULL, NULL, taken);
        hit_release(&h);
    }
    else {
        *taken = found < 0;
    }
    fields_release(&x);
    return r;
}

/* The row x[i] takes under the plan's bounds (lo, hi, shift), for the exact int i: i, or
 * i + shift when negative, as a new reference; NULL, with no error, when i is outside
 * lo <= i < hi (the Python op raises its error). */
static PyObject *
planned_row(const long long *bounds, PyObject *i)
{
    long long v, lo = bounds[0], hi = bounds[1], shift = bounds[2];
    if (!long_long_of(i, &v) || v < lo || v >= hi) {
        return NULL;
    }
    if (v >= 0) {
        Py_INCREF(i);
        return i;
    }
    if ((shift > 0 && v > LLONG_MAX - shift) || (shift < 0 && v < LLONG_MIN - shift)) {
        return NULL;
    }
    PyObject *r = PyLong_FromLongLong(v + shift);
    if (r == NULL) {
        PyErr_Clear(); /* no memory for an int: the Python op will say so too */
    }
    return r;
}

/* A form the op's planner plans, on the tensor a (fields x) and, for matmul, the tensor
 * b (fields y, else NULL): the kernel memo's hit, then the plan of `key`; the answer is
 * a itself, or the shortcut on the payloads (then `extra`, the plan's, or for x[i] the
 * row the plan makes of arg), or the kernel with the plan's keywords. */
static PyObject *
fast_planned(OpObject *op, int form, PyObject *a, Fields *x, PyObject *b, Fields *y,
             PyObject *const *key, PyObject *arg, int *taken)
{
    Hit h;
    int found = lookup(op, x->backend, x->dtype, form, &h);
    if (found <= 0) {
        *taken = found < 0;
        return NULL;
    }
    PyObject *r = NULL, *plan = NULL, *row = NULL;
    long long bounds[3];
    if (form == FORM_IX && h.payload == NULL) {
        goto done; /* x[i] has no kernel of its own: the shortcut serves it, or Python */
    }
    found = plan_for(op, form, key, a, arg, &plan, bounds);
    if (found <= 0) {
        *taken = found < 0;
        goto done;
    }
    PyObject *out = PyTuple_GET_ITEM(plan, 0), *kwnames = PyTuple_GET_ITEM(plan, 1);
    PyObject *kwvalues = PyTuple_GET_ITEM(plan, 2), *extra = PyTuple_GET_ITEM(plan, 3);
    if (form == FORM_IX) {
        row = extra = planned_row(bounds, arg);
        if (row == NULL) {
            goto done;
        }
    }
    if (out == Py_None) { /* the Python op's answer is x itself */
        *taken = 1;
        Py_INCREF(a);
        r = a;
        goto done;
    }
    PyObject *pargs[3] = {x->data, NULL, NULL}, *kargs[2] = {a, b};
    Py_ssize_t np = 1;
    if (y != NULL) {
        pargs[np++] = y->data;
    }
    if (extra != Py_None) {
        pargs[np++] = extra;
    }
    r = call_kernel(&h, out, pargs, np, kwvalues == Py_None ? NULL : kargs, y != NULL ? 2 : 1,
                    kwnames, kwvalues, taken);
done:
    Py_XDECREF(row);
    Py_XDECREF(plan);
    hit_release(&h);
    return r;
}

/* op(x) of a reduction over every axis: the reduce kernel with the plan's keywords (the
 * op's kind, the axes, no kept dims) into the plan's 0-d out. */
static PyObject *
fast_reduce(OpObject *op, PyObject *a, int *taken)
{
    Fields x;
    if (!fields_of(a, &x)) {
        return NULL;
    }
    PyObject *key[4] = {x.shape, NULL, NULL, NULL};
    PyObject *r = fast_planned(op, FORM_RD, a, &x, NULL, NULL, key, op->params, taken);
    fields_release(&x);
    return r;
}

/* Two matrices of one backend and dtype: the backend's dot with the plan's axes. */
static PyObject *
fast_matmul(OpObject *op, PyObject *a, PyObject *b, int *taken)
{
    Fields x, y;
    PyObject *r = NULL;
    if (!fields_of(a, &x)) {
        return NULL;
    }
    if (fields_of(b, &y)) {
        if (x.backend == y.backend && x.dtype == y.dtype && PyTuple_GET_SIZE(x.shape) == 2
            && PyTuple_GET_SIZE(y.shape) == 2) {
            PyObject *key[4] = {x.shape, y.shape, NULL, NULL};
            r = fast_planned(op, FORM_MM, a, &x, b, &y, key, b, taken);
        }
        fields_release(&y);
    }
    fields_release(&x);
    return r;
}

static PyObject *
op_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    OpObject *op = (OpObject *)self;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0) {
        int taken = 0;
        PyObject *r = NULL;
        /* a kernel or shortcut may call the op again: deep enough, RecursionError */
        if (Py_EnterRecursiveCall(" in a numerix op")) {
            return NULL;
        }
        if (op->arity == 2 && n == 2) {
            r = fast_binary(op, args[0], args[1], &taken);
        }
        else if (op->arity == 1 && n == 1) {
            r = fast_unary(op, args[0], &taken);
        }
        else if (op->arity == 3 && n == 2) {
            r = fast_matmul(op, args[0], args[1], &taken);
        }
        else if (op->arity == 4 && n == 1) {
            r = fast_reduce(op, args[0], &taken);
        }
        Py_LeaveRecursiveCall();
        if (taken) {
            return r;
        }
    }
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

static PyObject *
op_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *primitive, *fallback, *params = Py_None, *planner = Py_None;
    int arity;
    static char *kwlist[] = {"primitive", "fallback", "arity", "params", "planner", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOi|OO:Op", kwlist, &primitive, &fallback,
                                     &arity, &params, &planner)) {
        return NULL;
    }
    if (arity < 1 || arity > 4) {
        PyErr_Format(PyExc_ValueError,
                     "Op: arity is 1 (unary), 2 (binary), 3 (matrix product) or 4 (reduction "
                     "over every axis), got %d", arity);
        return NULL;
    }
    if (!PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "Op: fallback must be callable");
        return NULL;
    }
    if (planner != Py_None && !PyCallable_Check(planner)) {
        PyErr_SetString(PyExc_TypeError, "Op: planner must be callable or None");
        return NULL;
    }
    OpObject *op = (OpObject *)type->tp_alloc(type, 0);
    if (op == NULL) {
        return NULL;
    }
    op->vectorcall = op_vectorcall;
    Py_INCREF(primitive);
    op->primitive = primitive;
    Py_INCREF(fallback);
    op->fallback = fallback;
    Py_INCREF(params);
    op->params = params;
    Py_INCREF(planner);
    op->planner = planner;
    op->arity = arity;
    op->n = 0;
    op->generation = Generation;
    return (PyObject *)op;
}

static int
op_traverse(OpObject *op, visitproc visit, void *arg)
{
    Py_VISIT(op->primitive);
    Py_VISIT(op->fallback);
    Py_VISIT(op->params);
    Py_VISIT(op->planner);
    Py_VISIT(op->dict);
    for (int i = 0; i < op->nplans; i++) {
        Plan *p = &op->plans[i];
        for (int k = 0; k < 4; k++) {
            Py_VISIT(p->key[k]);
        }
        Py_VISIT(p->plan);
    }
    for (int i = 0; i < op->n; i++) {
        Entry *e = &op->memo[i];
        Py_VISIT(e->backend);
        Py_VISIT(e->dtype);
        Py_VISIT(e->kernel);
        Py_VISIT(e->name);
        Py_VISIT(e->odt);
        Py_VISIT(e->payload);
        Py_VISIT(e->payload_type);
        Py_VISIT(e->context);
        Py_VISIT(e->as_payload);
        for (int k = 0; k < SCALARS; k++) {
            Py_VISIT(e->scalar[k]);
            Py_VISIT(e->operand[k]);
        }
    }
    return 0;
}

static int
op_clear(OpObject *op)
{
    Py_CLEAR(op->primitive);
    Py_CLEAR(op->fallback);
    Py_CLEAR(op->params);
    Py_CLEAR(op->planner);
    Py_CLEAR(op->dict);
    memo_clear(op);
    return 0;
}

static void
op_dealloc(OpObject *op)
{
    PyObject_GC_UnTrack(op);
    if (op->weakreflist != NULL) {
        PyObject_ClearWeakRefs((PyObject *)op);
    }
    op_clear(op);
    Py_TYPE(op)->tp_free((PyObject *)op);
}

static PyObject *
op_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    /* a function stored on a class binds as a method; so does an Op */
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

/* `format` with the __qualname__ functools.update_wrapper gave o, else `otherwise` */
static PyObject *
repr_by_qualname(PyObject *o, const char *format, const char *otherwise)
{
    PyObject *name = PyObject_GetAttrString(o, "__qualname__");
    if (name == NULL) {
        return drop_exception() ? PyUnicode_FromString(otherwise) : NULL;
    }
    PyObject *r = PyUnicode_FromFormat(format, name);
    Py_DECREF(name);
    return r;
}

static PyObject *
op_repr(OpObject *op)
{
    return repr_by_qualname((PyObject *)op, "<op %S (compiled fast path)>", "<op>");
}

static PyObject *
op_reduce(OpObject *op, PyObject *Py_UNUSED(ignored))
{
    /* pickled by reference, as a function is: its qualified name in its module */
    return PyObject_GetAttrString((PyObject *)op, "__qualname__");
}

static PyObject *
op_memo(OpObject *op, PyObject *Py_UNUSED(ignored))
{
    /* [(backend, dtype, form, taken, shortcut)]: what this op has memoised, for tests */
    refresh(op);
    PyObject *list = PyList_New(op->n);
    if (list == NULL) {
        return NULL;
    }
    for (int i = 0; i < op->n; i++) {
        Entry *e = &op->memo[i];
        PyObject *t = Py_BuildValue("(OOsOO)", e->backend, e->dtype, FORM_NAMES[e->form],
                                    e->kernel != NULL ? Py_True : Py_False,
                                    e->payload != NULL ? Py_True : Py_False);
        if (t == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, t);
    }
    return list;
}

static PyMethodDef op_methods[] = {
    {"__reduce__", (PyCFunction)op_reduce, METH_NOARGS, NULL},
    {"memo", (PyCFunction)op_memo, METH_NOARGS,
     "What this op keeps: (backend, dtype, form, taken, shortcut) per entry."},
    {NULL}
};

static PyMemberDef op_members[] = {
    {"primitive", T_OBJECT, offsetof(OpObject, primitive), READONLY, "the primitive bound"},
    {"fallback", T_OBJECT, offsetof(OpObject, fallback), READONLY,
     "the Python op: every call the fast path does not take"},
    {"params", T_OBJECT, offsetof(OpObject, params), READONLY,
     "what the resolver is told besides the primitive (a reduction's kind), or None"},
    {"planner", T_OBJECT, offsetof(OpObject, planner), READONLY,
     "planner(form, x, arg): the plan of a shape-dependent form, from the Python rules"},
    {"__dictoffset__", T_PYSSIZET, offsetof(OpObject, dict), READONLY, NULL},
    {"__weaklistoffset__", T_PYSSIZET, offsetof(OpObject, weakreflist), READONLY, NULL},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(OpObject, vectorcall), READONLY, NULL},
    {NULL}
};

static PyGetSetDef op_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL}
};

static PyTypeObject OpType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "numerix._speedups.Op",
    .tp_basicsize = sizeof(OpObject),
    .tp_dealloc = (destructor)op_dealloc,
    .tp_repr = (reprfunc)op_repr,
    .tp_vectorcall_offset = offsetof(OpObject, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL
                | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "A public op with its compiled fast path (numerix._speedups).",
    .tp_traverse = (traverseproc)op_traverse,
    .tp_clear = (inquiry)op_clear,
    .tp_weaklistoffset = offsetof(OpObject, weakreflist),
    .tp_methods = op_methods,
    .tp_members = op_members,
    .tp_getset = op_getset,
    .tp_descr_get = op_descr_get,
    .tp_dictoffset = offsetof(OpObject, dict),
    .tp_new = op_new,
};

/* ------------------------------------------------------------------ Tensor's operators */

static PyObject *
call_ops(PyObject *name, PyObject *a, PyObject *b)
{
    if (Ops == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "numerix: Tensor's operators are not attached yet");
        return NULL;
    }
    PyObject *f = PyObject_GetAttr(Ops, name);
    if (f == NULL) {
        return NULL;
    }
    PyObject *args[2] = {a, b};
    PyObject *r = PyObject_Vectorcall(f, args, 2, NULL);
    Py_DECREF(f);
    return r;
}

/* a + b and b + a both come here: add(a, b) is the reflected op's call too */
static PyObject *t_add(PyObject *a, PyObject *b) { return call_ops(str_add, a, b); }
static PyObject *t_sub(PyObject *a, PyObject *b) { return call_ops(str_subtract, a, b); }
static PyObject *t_mul(PyObject *a, PyObject *b) { return call_ops(str_multiply, a, b); }
static PyObject *t_div(PyObject *a, PyObject *b) { return call_ops(str_divide, a, b); }
static PyObject *t_matmul(PyObject *a, PyObject *b) { return call_ops(str_matmul, a, b); }

static PyNumberMethods tensor_as_number = {
    .nb_add = t_add,
    .nb_subtract = t_sub,
    .nb_multiply = t_mul,
    .nb_true_divide = t_div,
    .nb_matrix_multiply = t_matmul,
};

/* ------------------------------------------------------------------ x[key], reshape */

/* getitem's and reshape's Ops, served once their families are loaded (serve()): their
 * memos keep the slice and reshape kernels, their planners the Python plans */
static OpObject *SliceOp = NULL;
static OpObject *ReshapeOp = NULL;
static OpObject *ReductionOps[N_REDUCTIONS]; /* numerix.sum, ...: x.sum() is sum(x) */

/* x[start:stop:step] with Python ints or None (the plan says what it selects: x itself,
 * or the slice kernel's start, stop and strides, and the normalised slice the shortcut
 * takes), and x[i] with a Python int i (served only by the backend's shortcut, with the
 * row the plan makes of i: one plan per shape, i is no part of its key). */
static PyObject *
fast_key(PyObject *self, PyObject *key, int *taken)
{
    OpObject *op = SliceOp;
    int form;
    PyObject *k[4];
    Fields x;
    if (op == NULL || !fields_of(self, &x)) {
        return NULL;
    }
    k[0] = x.shape;
    if (PyLong_CheckExact(key)) {
        form = FORM_IX;
        k[1] = k[2] = k[3] = NULL;
    }
    else {
        PySliceObject *s = (PySliceObject *)key;
        if ((s->start != Py_None && !PyLong_CheckExact(s->start))
            || (s->stop != Py_None && !PyLong_CheckExact(s->stop))
            || (s->step != Py_None && !PyLong_CheckExact(s->step))) {
            fields_release(&x);
            return NULL;
        }
        form = FORM_SL;
        k[1] = s->start;
        k[2] = s->stop;
        k[3] = s->step;
    }
    Py_INCREF(op); /* a planner may serve another op meanwhile */
    PyObject *r = fast_planned(op, form, self, &x, NULL, NULL, k, key, taken);
    Py_DECREF(op);
    fields_release(&x);
    return r;
}

static PyObject *
tensor_getitem(PyObject *self, PyObject *key)
{
    if (PySlice_Check(key) || PyLong_CheckExact(key)) {
        int taken = 0;
        PyObject *r = fast_key(self, key, &taken);
        if (taken) {
            return r;
        }
    }
    if (GetitemFallback == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "numerix: Tensor's indexing is not attached yet");
        return NULL;
    }
    PyObject *args[2] = {self, key};
    return PyObject_Vectorcall(GetitemFallback, args, 2, NULL);
}

static PyMappingMethods tensor_as_mapping = {
    .mp_subscript = tensor_getitem,
};

static PyObject *call_python_method(PyObject *fallback, const char *name, PyObject *self,
                                    PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

/* x.reshape(shape) with a tuple: the plan says x itself, or the reshape kernel into the
 * target shape it gives (-1 resolved), which the shortcut takes too. */
static PyObject *
tensor_reshape(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    OpObject *op = ReshapeOp;
    Fields x;
    if (nargs == 1 && kwnames == NULL && PyTuple_CheckExact(args[0]) && op != NULL
        && fields_of(self, &x)) {
        int taken = 0;
        PyObject *k[4] = {x.shape, args[0], NULL, NULL};
        Py_INCREF(op);
        PyObject *r = fast_planned(op, FORM_RS, self, &x, NULL, NULL, k, args[0], &taken);
        Py_DECREF(op);
        fields_release(&x);
        if (taken) {
            return r;
        }
    }
    return call_python_method(ReshapeFallback, "reshape", self, args, nargs, kwnames);
}

/* Tensor's Python method `fallback` (NULL: not attached yet) on self and the call's
 * arguments. */
static PyObject *
call_python_method(PyObject *fallback, const char *name, PyObject *self, PyObject *const *args,
                   Py_ssize_t nargs, PyObject *kwnames)
{
    if (fallback == NULL) {
        PyErr_Format(PyExc_RuntimeError, "numerix: Tensor.%s is not attached yet", name);
        return NULL;
    }
    Py_INCREF(fallback); /* attach() may replace it meanwhile */
    PyObject *small[8];
    PyObject **all = small;
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    Py_ssize_t total = 1 + nargs + nkw;
    if (total > 8) {
        all = PyMem_Malloc(total * sizeof(PyObject *));
        if (all == NULL) {
            return PyErr_NoMemory();
        }
    }
    all[0] = self;
    for (Py_ssize_t i = 0; i < nargs + nkw; i++) {
        all[i + 1] = args[i];
    }
    PyObject *r = PyObject_Vectorcall(fallback, all, 1 + nargs, kwnames);
    if (all != small) {
        PyMem_Free(all);
    }
    Py_DECREF(fallback);
    return r;
}

/* x.sum() (and prod, max, min, all, any) with no argument: what the Python method does,
 * the op over every axis (its Op's fast path, fast_reduce); anything else, the Python
 * method. */
static PyObject *
tensor_reduction(int which, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                 PyObject *kwnames)
{
    OpObject *op = ReductionOps[which];
    if (nargs == 0 && (kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0) && op != NULL) {
        int taken = 0;
        PyObject *r = NULL;
        if (Py_EnterRecursiveCall(" in a numerix op")) {
            return NULL;
        }
        Py_INCREF(op); /* a planner may serve another op meanwhile */
        r = fast_reduce(op, self, &taken);
        Py_DECREF(op);
        Py_LeaveRecursiveCall();
        if (taken) {
            return r;
        }
    }
    return call_python_method(ReductionFallbacks[which], REDUCTION_NAMES[which], self, args,
                              nargs, kwnames);
}

#define REDUCTION_METHOD(fname, which)                                                      \
    static PyObject *fname(PyObject *self, PyObject *const *args, Py_ssize_t nargs,        \
                           PyObject *kwnames)                                              \
    {                                                                                       \
        return tensor_reduction(which, self, args, nargs, kwnames);                         \
    }
REDUCTION_METHOD(tensor_sum, RD_SUM)
REDUCTION_METHOD(tensor_prod, RD_PROD)
REDUCTION_METHOD(tensor_max, RD_MAX)
REDUCTION_METHOD(tensor_min, RD_MIN)
REDUCTION_METHOD(tensor_all, RD_ALL)
REDUCTION_METHOD(tensor_any, RD_ANY)

#define FASTCALL_KW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS
static PyMethodDef tensor_methods[] = {
    {"reshape", FASTCALL_KW(tensor_reshape),
     "The same elements in C order with a new shape (numerix.reshape)."},
    {"sum", FASTCALL_KW(tensor_sum), "sum($self, /, axis=None, keepdims=False, dtype=None)\n--\n\n"
     "numerix.sum(x, axis=axis, keepdims=keepdims, dtype=dtype)."},
    {"prod", FASTCALL_KW(tensor_prod),
     "prod($self, /, axis=None, keepdims=False, dtype=None)\n--\n\n"
     "numerix.prod(x, axis=axis, keepdims=keepdims, dtype=dtype)."},
    {"max", FASTCALL_KW(tensor_max), "max($self, /, axis=None, keepdims=False)\n--\n\n"
     "numerix.max(x, axis=axis, keepdims=keepdims)."},
    {"min", FASTCALL_KW(tensor_min), "min($self, /, axis=None, keepdims=False)\n--\n\n"
     "numerix.min(x, axis=axis, keepdims=keepdims)."},
    {"all", FASTCALL_KW(tensor_all), "all($self, /, axis=None, keepdims=False)\n--\n\n"
     "numerix.all(x, axis=axis, keepdims=keepdims)."},
    {"any", FASTCALL_KW(tensor_any), "any($self, /, axis=None, keepdims=False)\n--\n\n"
     "numerix.any(x, axis=axis, keepdims=keepdims)."},
    {NULL}
};

static PyTypeObject TensorBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "numerix._speedups.TensorBase",
    .tp_basicsize = sizeof(TensorObject),
    .tp_dealloc = (destructor)tensor_dealloc,
    .tp_as_number = &tensor_as_number,
    .tp_as_mapping = &tensor_as_mapping,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Tensor's fields and its compiled operators (numerix._speedups).",
    .tp_traverse = (traverseproc)tensor_traverse,
    .tp_clear = (inquiry)tensor_clear,
    .tp_weaklistoffset = offsetof(TensorObject, weakreflist),
    .tp_methods = tensor_methods,
    .tp_members = tensor_members,
    .tp_setattro = (setattrofunc)tensor_setattro,
    .tp_new = PyType_GenericNew,
};

/* ------------------------------------------------------------------ jit's cached call */

/* The function numerix.jit returns (numerix.defn.jit._entry), in C: a call with
 * positional arguments whose signature (type, shape, dtype, backend of each) has a
 * program runs it; anything else goes to the Python call. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *slow;     /* Jitted.__call__ */
    PyObject *fast;     /* dict: key -> (run, rebuild or None, token) */
    PyObject *touch;    /* the LRU's move_to_end */
    PyObject *stats;    /* list: [hits, misses, evictions] */
    PyObject *active;   /* the ContextVar of the active trace */
    PyObject *default_key; /* a function of no arguments, or None: the compiler is named */
    PyObject *dict;
    PyObject *weakreflist;
} JitCallObject;

static PyTypeObject JitCallType;

/* A jit signature of one argument: (type, shape, dtype, backend), equal as that tuple
 * is, its hash computed once. A tensor keeps its own (TensorObject.sig), so a cached
 * call with the same tensors hashes nothing anew and compares by identity. */
typedef struct {
    PyObject_HEAD
    PyObject *type;
    PyObject *shape;
    PyObject *dtype;
    PyObject *backend;
    Py_hash_t hash;
} SignatureObject;

static PyTypeObject SignatureType;

static PyObject *
signature_new(PyObject *type, PyObject *shape, PyObject *dtype, PyObject *backend)
{
    PyObject *t = PyTuple_Pack(4, type, shape, dtype, backend);
    if (t == NULL) {
        return NULL;
    }
    /* t holds the four while hashing runs Python code (a dtype's __hash__) */
    Py_hash_t h = PyObject_Hash(t); /* an unhashable field: TypeError, as the tuple's */
    SignatureObject *sig = h == -1 ? NULL : PyObject_GC_New(SignatureObject, &SignatureType);
    if (sig == NULL) {
        Py_DECREF(t);
        return NULL;
    }
    Py_INCREF(type);
    sig->type = type;
    Py_INCREF(shape);
    sig->shape = shape;
    Py_INCREF(dtype);
    sig->dtype = dtype;
    Py_INCREF(backend);
    sig->backend = backend;
    sig->hash = h;
    Py_DECREF(t);
    PyObject_GC_Track(sig);
    return (PyObject *)sig;
}

static int
signature_traverse(SignatureObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->type);
    Py_VISIT(self->shape);
    Py_VISIT(self->dtype);
    Py_VISIT(self->backend);
    return 0;
}

static int
signature_clear(SignatureObject *self)
{
    Py_CLEAR(self->type);
    Py_CLEAR(self->shape);
    Py_CLEAR(self->dtype);
    Py_CLEAR(self->backend);
    return 0;
}

static void
signature_dealloc(SignatureObject *self)
{
    PyObject_GC_UnTrack(self);
    signature_clear(self);
    PyObject_GC_Del(self);
}

static Py_hash_t
signature_hash(SignatureObject *self)
{
    return self->hash;
}

static PyObject *
signature_astuple(SignatureObject *self)
{
    if (self->type == NULL) {
        return PyTuple_New(0);
    }
    return PyTuple_Pack(4, self->type, self->shape, self->dtype, self->backend);
}

static PyObject *
signature_richcompare(PyObject *a, PyObject *b, int op)
{
    if ((op != Py_EQ && op != Py_NE) || Py_TYPE(b) != &SignatureType
        || Py_TYPE(a) != &SignatureType) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    int eq = 1;
    if (a != b) {
        SignatureObject *x = (SignatureObject *)a, *y = (SignatureObject *)b;
        eq = x->hash == y->hash;
        PyObject *fx[4] = {x->type, x->shape, x->dtype, x->backend};
        PyObject *fy[4] = {y->type, y->shape, y->dtype, y->backend};
        for (int i = 0; eq == 1 && i < 4; i++) {
            eq = fx[i] == NULL || fy[i] == NULL ? fx[i] == fy[i]
                                                : PyObject_RichCompareBool(fx[i], fy[i], Py_EQ);
        }
        if (eq < 0) {
            return NULL;
        }
    }
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static PyObject *
signature_repr(SignatureObject *self)
{
    PyObject *t = signature_astuple(self);
    if (t == NULL) {
        return NULL;
    }
    PyObject *r = PyUnicode_FromFormat("Signature%R", t);
    Py_DECREF(t);
    return r;
}

static PyObject *
signature_reduce(SignatureObject *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *t = signature_astuple(self);
    if (t == NULL) {
        return NULL;
    }
    PyObject *r = Py_BuildValue("(ON)", (PyObject *)&SignatureType, t);
    return r;
}

static PyObject *
signature_tp_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *t, *shape, *dtype, *backend;
    if (kwds != NULL && PyDict_GET_SIZE(kwds) > 0) {
        PyErr_SetString(PyExc_TypeError, "Signature() takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OOOO:Signature", &t, &shape, &dtype, &backend)) {
        return NULL;
    }
    return signature_new(t, shape, dtype, backend);
}

static PyMethodDef signature_methods[] = {
    {"astuple", (PyCFunction)signature_astuple, METH_NOARGS,
     "(type, shape, dtype, backend), the tuple this signature equals."},
    {"__reduce__", (PyCFunction)signature_reduce, METH_NOARGS, NULL},
    {NULL}
};

static PyTypeObject SignatureType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "numerix._speedups.Signature",
    .tp_basicsize = sizeof(SignatureObject),
    .tp_dealloc = (destructor)signature_dealloc,
    .tp_repr = (reprfunc)signature_repr,
    .tp_hash = (hashfunc)signature_hash,
    .tp_richcompare = signature_richcompare,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Signature(type, shape, dtype, backend): one argument's part of a jit cache "
              "key, its hash computed once.",
    .tp_traverse = (traverseproc)signature_traverse,
    .tp_clear = (inquiry)signature_clear,
    .tp_methods = signature_methods,
    .tp_new = signature_tp_new,
};

/* The Signature of a (a new reference); NULL with no error set when a has no such field
 * (a number: the general path). A tensor's is made once and kept on it, and made anew
 * when one of its fields was set since: the kept one holds the old field objects, so a
 * new one cannot sit at the same address. */
static PyObject *
signature_of(PyObject *a)
{
    Fields f;
    if (fields_of(a, &f)) {
        TensorObject *t = (TensorObject *)a;
        SignatureObject *sig = (SignatureObject *)t->sig;
        if (sig == NULL || sig->type != (PyObject *)Py_TYPE(a) || sig->shape != f.shape
            || sig->dtype != f.dtype || sig->backend != f.backend) {
            PyObject *fresh = signature_new((PyObject *)Py_TYPE(a), f.shape, f.dtype,
                                            f.backend);
            fields_release(&f);
            if (fresh == NULL) {
                if (PyErr_ExceptionMatches(PyExc_TypeError)) {
                    PyErr_Clear(); /* an unhashable field: the general path says so */
                }
                return NULL;
            }
            Py_INCREF(fresh); /* the old one's fields may run code as they go */
            Py_XSETREF(t->sig, fresh);
            return fresh;
        }
        fields_release(&f);
        Py_INCREF(sig);
        return (PyObject *)sig;
    }
    PyObject *shape = PyObject_GetAttrString(a, "shape");
    PyObject *dtype = shape ? PyObject_GetAttrString(a, "dtype") : NULL;
    PyObject *backend = dtype ? PyObject_GetAttrString(a, "backend") : NULL;
    PyObject *r = NULL;
    if (backend != NULL) {
        r = signature_new((PyObject *)Py_TYPE(a), shape, dtype, backend);
    }
    if (r == NULL
        && (PyErr_ExceptionMatches(PyExc_AttributeError)
            || PyErr_ExceptionMatches(PyExc_TypeError))) {
        PyErr_Clear(); /* not tensor-like (a number), or unhashable: the general path */
    }
    Py_XDECREF(shape);
    Py_XDECREF(dtype);
    Py_XDECREF(backend);
    return r;
}

/* signature(a): jit's key for one argument, for the Python side to build the same keys
 * (numerix.defn.jit._fast_key); AttributeError for what is not tensor-like. */
static PyObject *
signature(PyObject *module, PyObject *a)
{
    PyObject *r = signature_of(a);
    if (r == NULL && !PyErr_Occurred()) {
        PyErr_Format(PyExc_AttributeError, "a %.100s has no jit signature",
                     Py_TYPE(a)->tp_name);
    }
    return r;
}

/* A program with one output, called as replay.runner's run_one would call it:
 * direct = (fn, trailing, shape, dtype, backend, bare), the program fn called on the
 * arguments' payloads and then the trailing values, its output (bare: as it is; else
 * the one item of the sequence it returns) wrapped as a tensor typed (shape, dtype) of
 * backend. *taken = 0 (nothing called) when direct or an argument is not of this form:
 * the runner serves. */
static PyObject *
run_direct(PyObject *direct, PyObject *const *args, Py_ssize_t n, int *taken)
{
    *taken = 0;
    if (!PyTuple_CheckExact(direct) || PyTuple_GET_SIZE(direct) != 6
        || !PyTuple_CheckExact(PyTuple_GET_ITEM(direct, 1))) {
        return NULL;
    }
    PyObject *fn = PyTuple_GET_ITEM(direct, 0), *trailing = PyTuple_GET_ITEM(direct, 1);
    int bare = PyObject_IsTrue(PyTuple_GET_ITEM(direct, 5));
    if (bare < 0) {
        *taken = !drop_exception();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!is_tensor(args[i])) {
            return NULL;
        }
    }
    Py_ssize_t m = PyTuple_GET_SIZE(trailing), total = n + m;
    PyObject *small[16];
    PyObject **v = small;
    if (total > 16) {
        v = PyMem_Malloc(total * sizeof(PyObject *));
        if (v == NULL) {
            *taken = 1;
            return PyErr_NoMemory();
        }
    }
    *taken = 1;
    /* strong references: the program may run Python code that sets a tensor's data */
    for (Py_ssize_t i = 0; i < n; i++) {
        v[i] = ((TensorObject *)args[i])->data;
        Py_INCREF(v[i]);
    }
    for (Py_ssize_t i = 0; i < m; i++) {
        v[n + i] = PyTuple_GET_ITEM(trailing, i);
        Py_INCREF(v[n + i]);
    }
    Py_INCREF(direct); /* its items while fn runs */
    PyObject *r = PyObject_Vectorcall(fn, v, total, NULL);
    for (Py_ssize_t i = 0; i < total; i++) {
        Py_DECREF(v[i]);
    }
    if (v != small) {
        PyMem_Free(v);
    }
    if (r != NULL && !bare) { /* o0, = fn(...) */
        PyObject *seq = PySequence_Tuple(r);
        Py_SETREF(r, NULL);
        if (seq != NULL && PyTuple_GET_SIZE(seq) == 1) {
            r = PyTuple_GET_ITEM(seq, 0);
            Py_INCREF(r);
        }
        else if (seq != NULL) {
            PyErr_Format(PyExc_ValueError, "a program of one output returned %zd values",
                         PyTuple_GET_SIZE(seq));
        }
        Py_XDECREF(seq);
    }
    PyObject *out = NULL;
    if (r != NULL) {
        out = new_out(PyTuple_GET_ITEM(direct, 2), PyTuple_GET_ITEM(direct, 3),
                      PyTuple_GET_ITEM(direct, 4));
        if (out != NULL) {
            Py_SETREF(((TensorObject *)out)->data, r);
        }
        else {
            Py_DECREF(r);
        }
    }
    Py_DECREF(direct);
    return out;
}

static PyObject *
jit_slow(JitCallObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
}

static PyObject *
jit_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    JitCallObject *self = (JitCallObject *)op;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        return jit_slow(self, args, nargsf, kwnames);
    }
    PyObject *active = NULL;
    if (PyContextVar_Get(self->active, Py_None, &active) < 0) {
        return NULL;
    }
    Py_DECREF(active);
    if (active != Py_None) { /* inside a trace: Jitted.__call__ inlines */
        return jit_slow(self, args, nargsf, kwnames);
    }
    PyObject *key = NULL;
    if (n == 1) {
        key = signature_of(args[0]);
    }
    else {
        key = PyTuple_New(n);
        for (Py_ssize_t i = 0; key != NULL && i < n; i++) {
            PyObject *sig = signature_of(args[i]);
            if (sig == NULL) {
                Py_CLEAR(key);
                break;
            }
            PyTuple_SET_ITEM(key, i, sig);
        }
    }
    if (key == NULL) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        return jit_slow(self, args, nargsf, NULL); /* a number: the general path */
    }
    if (self->default_key != Py_None) {
        PyObject *d = PyObject_CallNoArgs(self->default_key);
        if (d == NULL) {
            Py_DECREF(key);
            return NULL;
        }
        Py_SETREF(key, PyTuple_Pack(2, key, d));
        Py_DECREF(d);
        if (key == NULL) {
            return NULL;
        }
    }
    PyObject *hit = PyDict_GetItemWithError(self->fast, key); /* borrowed ... */
    Py_XINCREF(hit); /* ... and held: the dict may drop it while Python code runs */
    Py_DECREF(key);
    if (hit == NULL) {
        if (PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_TypeError)) { /* an unhashable leaf: slow */
                return NULL;
            }
            PyErr_Clear();
        }
        return jit_slow(self, args, nargsf, NULL);
    }
    Py_ssize_t size = PyTuple_CheckExact(hit) ? PyTuple_GET_SIZE(hit) : 0;
    if (size != 3 && size != 4) {
        Py_DECREF(hit);
        return jit_slow(self, args, nargsf, NULL);
    }
    PyObject *run = PyTuple_GET_ITEM(hit, 0), *rebuild = PyTuple_GET_ITEM(hit, 1);
    PyObject *token = PyTuple_GET_ITEM(hit, 2);
    PyObject *direct = size == 4 ? PyTuple_GET_ITEM(hit, 3) : Py_None;
    PyObject *hits = PyList_GetItem(self->stats, 0); /* IndexError if emptied */
    PyObject *more = hits == NULL ? NULL : PyNumber_Add(hits, One);
    if (more == NULL || PyList_SetItem(self->stats, 0, more) < 0) { /* steals more */
        Py_DECREF(hit);
        return NULL;
    }
    PyObject *t = PyObject_CallOneArg(self->touch, token);
    if (t == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_KeyError)) { /* dropped by another thread */
            Py_DECREF(hit);
            return NULL;
        }
        PyErr_Clear();
    }
    Py_XDECREF(t);
    PyObject *r;
    int taken = 0;
    if (direct != Py_None && rebuild == Py_None) {
        r = run_direct(direct, args, n, &taken);
    }
    if (!taken) {
        PyObject *argt = PyTuple_New(n);
        for (Py_ssize_t i = 0; argt != NULL && i < n; i++) {
            Py_INCREF(args[i]);
            PyTuple_SET_ITEM(argt, i, args[i]);
        }
        r = argt ? PyObject_CallOneArg(run, argt) : NULL;
        Py_XDECREF(argt);
        if (r != NULL && rebuild != Py_None) {
            Py_SETREF(r, PyObject_CallOneArg(rebuild, r));
        }
    }
    Py_DECREF(hit);
    return r;
}

static PyObject *
jit_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"slow", "fast", "touch", "stats", "active", "default_key", NULL};
    PyObject *slow, *fast, *touch, *stats, *active, *default_key;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO!OO!O!O:JitCall", kwlist, &slow,
                                     &PyDict_Type, &fast, &touch, &PyList_Type, &stats,
                                     &PyContextVar_Type, &active, &default_key)) {
        return NULL;
    }
    if (PyList_GET_SIZE(stats) < 1) {
        PyErr_SetString(PyExc_ValueError, "JitCall: stats must hold the hit count first");
        return NULL;
    }
    JitCallObject *self = (JitCallObject *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->vectorcall = jit_vectorcall;
    Py_INCREF(slow);
    self->slow = slow;
    Py_INCREF(fast);
    self->fast = fast;
    Py_INCREF(touch);
    self->touch = touch;
    Py_INCREF(stats);
    self->stats = stats;
    Py_INCREF(active);
    self->active = active;
    Py_INCREF(default_key);
    self->default_key = default_key;
    return (PyObject *)self;
}

static int
jit_traverse(JitCallObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->slow);
    Py_VISIT(self->fast);
    Py_VISIT(self->touch);
    Py_VISIT(self->stats);
    Py_VISIT(self->active);
    Py_VISIT(self->default_key);
    Py_VISIT(self->dict);
    return 0;
}

static int
jit_clear(JitCallObject *self)
{
    Py_CLEAR(self->slow);
    Py_CLEAR(self->fast);
    Py_CLEAR(self->touch);
    Py_CLEAR(self->stats);
    Py_CLEAR(self->active);
    Py_CLEAR(self->default_key);
    Py_CLEAR(self->dict);
    return 0;
}

static void
jit_dealloc(JitCallObject *self)
{
    PyObject_GC_UnTrack(self);
    if (self->weakreflist != NULL) {
        PyObject_ClearWeakRefs((PyObject *)self);
    }
    jit_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
jit_repr(JitCallObject *self)
{
    return repr_by_qualname((PyObject *)self, "<function %S>", "<jitted function>");
}

static PyMemberDef jit_members[] = {
    {"__dictoffset__", T_PYSSIZET, offsetof(JitCallObject, dict), READONLY, NULL},
    {"__weaklistoffset__", T_PYSSIZET, offsetof(JitCallObject, weakreflist), READONLY, NULL},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(JitCallObject, vectorcall), READONLY, NULL},
    {NULL}
};

static PyTypeObject JitCallType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "numerix._speedups.JitCall",
    .tp_basicsize = sizeof(JitCallObject),
    .tp_dealloc = (destructor)jit_dealloc,
    .tp_repr = (reprfunc)jit_repr,
    .tp_vectorcall_offset = offsetof(JitCallObject, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL
                | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "A jitted function's cached call (numerix._speedups).",
    .tp_traverse = (traverseproc)jit_traverse,
    .tp_clear = (inquiry)jit_clear,
    .tp_weaklistoffset = offsetof(JitCallObject, weakreflist),
    .tp_members = jit_members,
    .tp_getset = op_getset,
    .tp_descr_get = op_descr_get,
    .tp_dictoffset = offsetof(JitCallObject, dict),
    .tp_new = jit_new,
};

/* ------------------------------------------------------------------ module functions */

static PyObject *
configure(PyObject *module, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"tensor_type", "resolver", "scalar_operand", "int_operand",
                             "declined", NULL};
    PyObject *tt, *resolver, *scalar, *intop, *declined;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!OOOO:configure", kwlist, &PyType_Type, &tt,
                                     &resolver, &scalar, &intop, &declined)) {
        return NULL;
    }
    if (!PyExceptionClass_Check(declined)) {
        PyErr_SetString(PyExc_TypeError, "configure: declined must be an exception class");
        return NULL;
    }
    if (!PyType_IsSubtype((PyTypeObject *)tt, &TensorBaseType)) {
        PyErr_SetString(PyExc_TypeError, "configure: tensor_type must subclass TensorBase");
        return NULL;
    }
    Py_INCREF(tt);
    Py_XSETREF(TensorType, (PyTypeObject *)tt);
    Py_INCREF(resolver);
    Py_XSETREF(Resolver, resolver);
    Py_INCREF(scalar);
    Py_XSETREF(ScalarOperand, scalar);
    Py_INCREF(intop);
    Py_XSETREF(IntOperand, intop);
    Py_INCREF(declined);
    Py_XSETREF(Declined, declined);
    Generation++;
    Py_RETURN_NONE;
}

static PyObject *
attach(PyObject *module, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"ops", "getitem", "reshape", "reductions", NULL};
    PyObject *ops, *getitem, *reshape, *reductions = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO|O!:attach", kwlist, &ops, &getitem,
                                     &reshape, &PyTuple_Type, &reductions)) {
        return NULL;
    }
    if (reductions != NULL && PyTuple_GET_SIZE(reductions) != N_REDUCTIONS) {
        PyErr_Format(PyExc_ValueError, "attach: reductions are Tensor's Python sum, prod, max, "
                     "min, all and any, got %zd", PyTuple_GET_SIZE(reductions));
        return NULL;
    }
    for (int i = 0; reductions != NULL && i < N_REDUCTIONS; i++) {
        PyObject *f = PyTuple_GET_ITEM(reductions, i);
        Py_INCREF(f);
        Py_XSETREF(ReductionFallbacks[i], f);
    }
    Py_INCREF(ops);
    Py_XSETREF(Ops, ops);
    Py_INCREF(getitem);
    Py_XSETREF(GetitemFallback, getitem);
    Py_INCREF(reshape);
    Py_XSETREF(ReshapeFallback, reshape);
    Py_RETURN_NONE;
}

static PyObject *
serve(PyObject *module, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"getitem", "reshape", "sum", "prod", "max", "min", "all", "any",
                             NULL};
    PyObject *gop = NULL, *rop = NULL, *reds[N_REDUCTIONS] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$O!O!O!O!O!O!O!O!:serve", kwlist, &OpType,
                                     &gop, &OpType, &rop, &OpType, &reds[0], &OpType, &reds[1],
                                     &OpType, &reds[2], &OpType, &reds[3], &OpType, &reds[4],
                                     &OpType, &reds[5])) {
        return NULL;
    }
    for (int i = 0; i < N_REDUCTIONS; i++) {
        if (reds[i] != NULL && ((OpObject *)reds[i])->arity != 4) {
            PyErr_Format(PyExc_ValueError, "serve: %s must be a reduction's Op (arity 4)",
                         REDUCTION_NAMES[i]);
            return NULL;
        }
    }
    for (int i = 0; i < N_REDUCTIONS; i++) {
        if (reds[i] != NULL) {
            Py_INCREF(reds[i]);
            Py_XSETREF(ReductionOps[i], (OpObject *)reds[i]);
        }
    }
    if (gop != NULL) {
        Py_INCREF(gop);
        Py_XSETREF(SliceOp, (OpObject *)gop);
    }
    if (rop != NULL) {
        Py_INCREF(rop);
        Py_XSETREF(ReshapeOp, (OpObject *)rop);
    }
    Py_RETURN_NONE;
}

static PyObject *
clear(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    Generation++;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"signature", signature, METH_O,
     "signature(a): jit's cache key for the argument a, (type, shape, dtype, backend) as a "
     "Signature kept on the tensor; AttributeError for what is not tensor-like."},
    {"configure", (PyCFunction)(void (*)(void))configure, METH_VARARGS | METH_KEYWORDS,
     "configure(tensor_type, resolver, scalar_operand, int_operand, declined): the Tensor "
     "type served, the rules' resolver, the scalar operands' makers, the error a shortcut "
     "raises to have the kernel called."},
    {"attach", (PyCFunction)(void (*)(void))attach, METH_VARARGS | METH_KEYWORDS,
     "attach(ops, getitem, reshape, reductions=()): what Tensor's operators call, and the "
     "Python x[key], reshape and (a tuple) sum, prod, max, min, all, any they fall back to."},
    {"serve", (PyCFunction)(void (*)(void))serve, METH_VARARGS | METH_KEYWORDS,
     "serve(*, getitem=None, reshape=None, sum=None, ..., any=None): the Ops whose memos and "
     "plans serve x[key], x.reshape(shape) and x.sum() ... x.any() (their families give them "
     "as they load)."},
    {"clear", clear, METH_NOARGS, "Drop what every Op has memoised (a backend changed)."},
    {NULL}
};

/* The constants the module's code uses, made once per process: the module may be
 * imported again (its exec runs again) and keeps them; on a failure, none is kept. */
static int
make_constants(void)
{
    if (One != NULL) {
        return 0;
    }
    PyObject *forms[N_FORMS] = {NULL};
    PyObject *one = PyLong_FromLong(1);
    PyObject *add = PyUnicode_InternFromString("add");
    PyObject *sub = PyUnicode_InternFromString("subtract");
    PyObject *mul = PyUnicode_InternFromString("multiply");
    PyObject *div = PyUnicode_InternFromString("divide");
    PyObject *mat = PyUnicode_InternFromString("matmul");
    int ok = one && add && sub && mul && div && mat;
    for (int i = 0; ok && i < N_FORMS; i++) {
        forms[i] = PyUnicode_InternFromString(FORM_NAMES[i]);
        ok = forms[i] != NULL;
    }
    PyObject *fields[FIELD_COUNT] = {NULL};
    for (int i = 0; ok && i < FIELD_COUNT; i++) {
        fields[i] = PyUnicode_InternFromString(FIELD_NAMES[i]);
        ok = fields[i] != NULL;
    }
    if (!ok) {
        for (int i = 0; i < FIELD_COUNT; i++) {
            Py_XDECREF(fields[i]);
        }
        Py_XDECREF(one);
        Py_XDECREF(add);
        Py_XDECREF(sub);
        Py_XDECREF(mul);
        Py_XDECREF(div);
        Py_XDECREF(mat);
        for (int i = 0; i < N_FORMS; i++) {
            Py_XDECREF(forms[i]);
        }
        return -1;
    }
    str_add = add;
    str_subtract = sub;
    str_multiply = mul;
    str_divide = div;
    str_matmul = mat;
    memcpy(FormNames, forms, sizeof forms);
    memcpy(field_names, fields, sizeof fields);
    One = one;
    return 0;
}

static int
speedups_exec(PyObject *m)
{
    if (PyType_Ready(&TensorBaseType) < 0 || PyType_Ready(&OpType) < 0
        || PyType_Ready(&JitCallType) < 0 || PyType_Ready(&SignatureType) < 0
        || make_constants() < 0) {
        return -1;
    }
    /* PyModule_AddObjectRef: a new reference each, none kept on a failure (3.10+) */
    if (PyModule_AddObjectRef(m, "TensorBase", (PyObject *)&TensorBaseType) < 0
        || PyModule_AddObjectRef(m, "JitCall", (PyObject *)&JitCallType) < 0
        || PyModule_AddObjectRef(m, "Signature", (PyObject *)&SignatureType) < 0
        || PyModule_AddObjectRef(m, "Op", (PyObject *)&OpType) < 0) {
        return -1;
    }
    return 0;
}

/* Static types and one process-wide state (configure, the memos, unlocked): one
 * interpreter, and the GIL held. On a free-threaded build setup.py does not build this
 * module; one built there anyway turns the GIL back on as it is imported (and CPython
 * says so with a RuntimeWarning). docs/decisions.md 40. */
static PyModuleDef_Slot speedups_slots[] = {
    {Py_mod_exec, speedups_exec},
#ifdef Py_mod_multiple_interpreters
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
#ifdef Py_mod_gil
    {Py_mod_gil, Py_MOD_GIL_USED},
#endif
    {0, NULL}
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "numerix._speedups",
    .m_doc = "The compiled fast path of numerix's hot ops (docs/decisions.md 38).",
    .m_size = 0,
    .m_methods = module_methods,
    .m_slots = speedups_slots,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    return PyModuleDef_Init(&speedups_module);
}

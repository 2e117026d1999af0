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
 * TensorBase holds Tensor's four fields in C and gives Tensor the operators + - * / @
 * and x[key] and reshape without a Python frame; numerix._tensor.Tensor subclasses it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <string.h>

/* ------------------------------------------------------------------ module state */
/* One interpreter, one numerix: the state is set once by configure(). */

static PyTypeObject *TensorType = NULL; /* numerix._tensor.Tensor, the exact type served */
static PyObject *Resolver = NULL;       /* resolve(primitive, form, backend, dtype) */
static PyObject *ScalarOperand = NULL;  /* scalar_operand(value, dtype, backend) */
static PyObject *IntOperand = NULL;     /* int_operand(primitive, value, dtype, backend) */
static PyObject *Ops = NULL;            /* the namespace Tensor's operators call */
static PyObject *ReshapeFallback = NULL;
static PyObject *GetitemFallback = NULL;
static Py_ssize_t MatmulCheckFrom = 0;  /* m * n past which matmul checks memory */
static PyObject *DotKwnames = NULL;     /* ("contract_x", "batch_x", "contract_y", "batch_y") */
static PyObject *DotKwvalues[4];
static PyObject *SliceKwnames = NULL;   /* ("start", "stop", "strides") */
static unsigned long Generation = 1;   /* bumped by clear(): every Op's memo is dropped */
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

static PyMemberDef tensor_members[] = {
    {"data", T_OBJECT_EX, offsetof(TensorObject, data), 0, "the backend's native array"},
    {"shape", T_OBJECT_EX, offsetof(TensorObject, shape), 0, "the shape, a tuple of ints"},
    {"dtype", T_OBJECT_EX, offsetof(TensorObject, dtype), 0, "the numerix dtype"},
    {"backend", T_OBJECT_EX, offsetof(TensorObject, backend), 0, "the backend holding data"},
    {"__weaklistoffset__", T_PYSSIZET, offsetof(TensorObject, weakreflist), READONLY, NULL},
    {NULL}
};

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
    FORM_RD, N_FORMS
};
static const char *FORM_NAMES[N_FORMS] = {"tt", "ts", "st", "ti", "it", "u", "mm", "rs", "sl",
                                          "ix", "rd"};

#define MEMO 32 /* entries per op; past it the oldest one is replaced */

typedef struct {
    PyObject *backend;  /* strong: an entry keeps its backend alive, as a plan does */
    PyObject *dtype;
    int form;
    PyObject *kernel;   /* the backend's kernel function (unbound), or NULL: not this way */
    PyObject *name;     /* its name on the backend's class, checked on every use */
    PyObject *odt;      /* the output's dtype */
    PyObject *payload;  /* the backend's shortcut (Backend.fast_kernel), or NULL */
    PyTypeObject *payload_type; /* what a payload it returns is: anything else, the kernel */
    int payload_0d;     /* cleared when a 0-d call gave something else: 0-d skips it */
    PyObject *scalar;   /* the last Python float or int of a scalar form ... */
    PyObject *operand;  /* ... and the 0-d operand the rules made of it */
} Entry;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *primitive;
    PyObject *fallback;
    PyObject *params;   /* what the resolver is told besides the primitive (a kind), or None */
    PyObject *dict;
    PyObject *weakreflist;
    int arity;
    int n;
    int victim; /* the entry a full memo replaces next */
    unsigned long generation;
    Entry memo[MEMO];
} OpObject;

static PyTypeObject OpType;

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
    Py_CLEAR(e->scalar);
    Py_CLEAR(e->operand);
}

static void
memo_clear(OpObject *op)
{
    for (int i = 0; i < op->n; i++) {
        entry_clear(&op->memo[i]);
    }
    op->n = 0;
    op->victim = 0;
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
}

/* The entry for (backend, dtype, form) as the memo holds it now, or NULL. */
static Entry *
find_entry(OpObject *op, PyObject *backend, PyObject *dtype, int form)
{
    if (op->generation != Generation) {
        memo_clear(op);
        op->generation = Generation;
        return NULL;
    }
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
    return 1;
}

/* Fill *h for (backend, dtype, form), asking the resolver on a miss: 1, or 0 (no error
 * set) for "not this way" (or the resolver failed, which the Python path will say). */
static int
lookup(OpObject *op, PyObject *backend, PyObject *dtype, int form, Hit *h)
{
    memset(h, 0, sizeof(Hit));
    if (op->generation != Generation) {
        memo_clear(op);
        op->generation = Generation;
    }
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
    PyObject *args[5] = {op->primitive, NULL, backend, dtype, op->params};
    args[1] = PyUnicode_InternFromString(FORM_NAMES[form]);
    if (args[1] == NULL) {
        PyErr_Clear();
        return 0;
    }
    PyObject *r = PyObject_Vectorcall(Resolver, args, 5, NULL);
    Py_DECREF(args[1]);
    if (r == NULL) {
        PyErr_Clear();
        return 0;
    }
    PyObject *kernel = NULL, *name = NULL, *odt = NULL, *payload = NULL, *ptype = NULL;
    if (r != Py_None) {
        if (!PyTuple_CheckExact(r) || PyTuple_GET_SIZE(r) != 5
            || !PyUnicode_CheckExact(PyTuple_GET_ITEM(r, 1))) {
            Py_DECREF(r);
            return 0;
        }
        kernel = PyTuple_GET_ITEM(r, 0);
        name = PyTuple_GET_ITEM(r, 1);
        odt = PyTuple_GET_ITEM(r, 2);
        payload = PyTuple_GET_ITEM(r, 3);
        ptype = PyTuple_GET_ITEM(r, 4);
        if (payload == Py_None || !PyType_Check(ptype)) {
            payload = ptype = NULL;
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
    e->payload_0d = 1;
    e->operand = NULL;
    e->scalar = NULL;
    Py_DECREF(r);
    return hit_from(h, op, e);
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
    int eq = PyObject_RichCompareBool(v, k, Py_EQ);
    if (eq < 0) {
        PyErr_Clear();
        return 0;
    }
    return eq;
}

/* The 0-d operand of the Python float or int v, as the rules make it (scalar_operand;
 * an int is checked to fit an integer dtype first, by int_operand), kept in the entry
 * for the last value: a loop multiplies by the same constant. A new reference. */
static PyObject *
scalar_for(Hit *h, PyObject *v)
{
    Entry *e = find_entry(h->op, h->backend, h->dtype, h->form);
    if (e != NULL && e->operand != NULL && same_scalar(v, e->scalar)) {
        Py_INCREF(e->operand);
        return e->operand;
    }
    PyObject *t;
    if (PyFloat_CheckExact(v)) {
        PyObject *args[3] = {v, h->dtype, h->backend};
        t = PyObject_Vectorcall(ScalarOperand, args, 3, NULL);
    }
    else {
        PyObject *args[4] = {h->op->primitive, v, h->dtype, h->backend};
        t = IntOperand ? PyObject_Vectorcall(IntOperand, args, 4, NULL) : NULL;
        if (IntOperand == NULL) {
            PyErr_SetString(PyExc_RuntimeError, "int_operand is not configured");
        }
    }
    if (t == NULL) {
        return NULL;
    }
    if (!is_tensor(t)) {
        Py_DECREF(t);
        PyErr_SetString(PyExc_TypeError, "scalar_operand did not return a Tensor");
        return NULL;
    }
    e = find_entry(h->op, h->backend, h->dtype, h->form); /* after Python code: again */
    if (e != NULL) {
        Py_INCREF(t);
        Py_XSETREF(e->operand, t);
        Py_INCREF(v);
        Py_XSETREF(e->scalar, v);
    }
    return t;
}

/* A kernel failed: anything but an Exception (KeyboardInterrupt ...) goes up; an
 * Exception is dropped and the Python op runs, to raise its named error. Returns 1
 * to fall back, 0 to propagate. */
static int
fall_back_after_error(void)
{
    if (PyErr_ExceptionMatches(PyExc_Exception)) {
        PyErr_Clear();
        return 1;
    }
    return 0;
}

/* The backend's shortcut on the payloads `args` (Backend.fast_kernel): 1 with *result
 * the output (or NULL and an error), 0 to call the kernel instead, -1 for the Python op
 * (the shortcut raised: the op runs again, and says what went wrong). */
static int
try_payload(Hit *h, PyObject *shape, PyObject *const *args, Py_ssize_t n, PyObject **result)
{
    int zero_d = PyTuple_GET_SIZE(shape) == 0;
    if (h->payload == NULL || (zero_d && !h->payload_0d)) {
        return 0;
    }
    PyObject *r = PyObject_Vectorcall(h->payload, args, n, NULL);
    if (r == NULL) {
        if (fall_back_after_error()) {
            return -1;
        }
        *result = NULL;
        return 1;
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
    TensorObject *t = (TensorObject *)new_out(shape, h->odt, h->backend);
    if (t == NULL) {
        Py_DECREF(r);
        *result = NULL;
        return 1;
    }
    Py_SETREF(t->data, r);
    *result = (PyObject *)t;
    return 1;
}

/* The kernel on the tensors a (and b, if not NULL) into a new out of `shape`, with the
 * keyword arguments `kwvalues` / `kwnames` (or none, NULL). NULL with an error, or
 * `taken = 0` for the Python op. */
static PyObject *
run_kernel(Hit *h, PyObject *shape, PyObject *a, PyObject *b, PyObject *const *kwvalues,
           PyObject *kwnames, int *taken)
{
    PyObject *out = new_out(shape, h->odt, h->backend);
    if (out == NULL) {
        return NULL;
    }
    Py_ssize_t nk = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    PyObject *args[8] = {h->backend, out, a, b};
    Py_ssize_t na = b == NULL ? 3 : 4;
    for (Py_ssize_t i = 0; i < nk && na + i < 8; i++) { /* the keywords' values follow */
        args[na + i] = kwvalues[i];
    }
    PyObject *r = PyObject_Vectorcall(h->kernel, args, na, nk ? kwnames : NULL);
    Py_DECREF(out);
    if (r == NULL && fall_back_after_error()) {
        *taken = 0;
    }
    return r;
}

/* The output of the tensors a (and b) through the hit: its shortcut, else its kernel,
 * with the keyword arguments `kwvalues` / `kwnames` (or none). `extra`, if not NULL, is
 * the shortcut's last argument (reshape's shape). NULL with an error, or
 * `taken = 0` for the Python op. The payloads are held for the call's length. */
static PyObject *
call_kernel(Hit *h, PyObject *shape, PyObject *a, PyObject *b, PyObject *extra,
            PyObject *const *kwvalues, PyObject *kwnames, int *taken)
{
    PyObject *pargs[3] = {((TensorObject *)a)->data, NULL, NULL};
    Py_ssize_t np = 1;
    if (b != NULL) {
        pargs[np++] = ((TensorObject *)b)->data;
    }
    if (extra != NULL) {
        pargs[np++] = extra;
    }
    for (Py_ssize_t i = 0; i < np; i++) {
        Py_INCREF(pargs[i]);
    }
    PyObject *r = NULL;
    int done = try_payload(h, shape, pargs, np, &r);
    for (Py_ssize_t i = 0; i < np; i++) {
        Py_DECREF(pargs[i]);
    }
    if (done == 1) {
        return r;
    }
    if (done < 0) {
        *taken = 0;
        return NULL;
    }
    return run_kernel(h, shape, a, b, kwvalues, kwnames, taken);
}

/* The tensor x and the Python float or int v, v on the left when `left`: the kernel
 * on x and the 0-d operand the rules make of v. */
static PyObject *
fast_scalar(OpObject *op, TensorObject *x, PyObject *v, int left, int *taken)
{
    int form = PyFloat_CheckExact(v) ? (left ? FORM_ST : FORM_TS) : (left ? FORM_IT : FORM_TI);
    Hit h;
    if (!lookup(op, x->backend, x->dtype, form, &h)) {
        return NULL;
    }
    PyObject *r = NULL, *s = scalar_for(&h, v);
    if (s == NULL) {
        PyErr_Clear(); /* the Python op says what is wrong with v */
    }
    else {
        *taken = 1;
        PyObject *t = (PyObject *)x;
        r = call_kernel(&h, x->shape, left ? s : t, left ? t : s, NULL, NULL, NULL, taken);
        Py_DECREF(s);
    }
    hit_release(&h);
    return r;
}

static PyObject *
fast_binary(OpObject *op, PyObject *a, PyObject *b, int *taken)
{
    Hit h;
    PyObject *r = NULL;
    *taken = 0;
    if (is_tensor(a)) {
        TensorObject *x = (TensorObject *)a;
        if (is_tensor(b)) {
            TensorObject *y = (TensorObject *)b;
            if (x->backend != y->backend || x->dtype != y->dtype) {
                return NULL;
            }
            if (x->shape != y->shape) {
                int eq = PyObject_RichCompareBool(x->shape, y->shape, Py_EQ);
                if (eq <= 0) {
                    PyErr_Clear();
                    return NULL;
                }
            }
            if (!lookup(op, x->backend, x->dtype, FORM_TT, &h)) {
                return NULL;
            }
            *taken = 1;
            r = call_kernel(&h, x->shape, a, b, NULL, NULL, NULL, taken);
            hit_release(&h);
            return r;
        }
        if (PyFloat_CheckExact(b) || PyLong_CheckExact(b)) {
            return fast_scalar(op, x, b, 0, taken);
        }
        return NULL;
    }
    if ((PyFloat_CheckExact(a) || PyLong_CheckExact(a)) && is_tensor(b)) {
        return fast_scalar(op, (TensorObject *)b, a, 1, taken);
    }
    return NULL;
}

static PyObject *
fast_unary(OpObject *op, PyObject *a, int *taken)
{
    Hit h;
    *taken = 0;
    if (!is_tensor(a)) {
        return NULL;
    }
    TensorObject *x = (TensorObject *)a;
    if (!lookup(op, x->backend, x->dtype, FORM_U, &h)) {
        return NULL;
    }
    *taken = 1;
    PyObject *r = call_kernel(&h, x->shape, a, NULL, NULL, NULL, NULL, taken);
    hit_release(&h);
    return r;
}

/* op(x) of a reduction over every axis of a non-empty x (an empty one is the Python op's:
 * a kind with no identity refuses it): the reduce kernel with the op's kind, every axis
 * and no kept dims, into a 0-d out of the dtype the rules gave. */
#define MAX_REDUCE_NDIM 8
static PyObject *AxesTuples[MAX_REDUCE_NDIM + 1]; /* (), (0,), (0, 1), ... */
static PyObject *ReduceKwnames = NULL;            /* ("kind", "axes", "keepdims") */
static PyObject *EmptyTuple = NULL;

static PyObject *
fast_reduce(OpObject *op, PyObject *a, int *taken)
{
    *taken = 0;
    if (!is_tensor(a) || ReduceKwnames == NULL) {
        return NULL;
    }
    TensorObject *x = (TensorObject *)a;
    Py_ssize_t nd = PyTuple_GET_SIZE(x->shape);
    if (nd > MAX_REDUCE_NDIM) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nd; i++) {
        PyObject *d = PyTuple_GET_ITEM(x->shape, i);
        if (!PyLong_CheckExact(d) || PyLong_AsSsize_t(d) <= 0) {
            PyErr_Clear();
            return NULL;
        }
    }
    Hit h;
    if (!lookup(op, x->backend, x->dtype, FORM_RD, &h)) {
        return NULL;
    }
    *taken = 1;
    PyObject *kw[3] = {op->params, AxesTuples[nd], Py_False};
    PyObject *r = run_kernel(&h, EmptyTuple, a, NULL, kw, ReduceKwnames, taken);
    hit_release(&h);
    return r;
}

/* Two matrices, as matmul's own first case: the backend's dot with matmul's axes. */
static PyObject *
fast_matmul(OpObject *op, PyObject *a, PyObject *b, int *taken)
{
    *taken = 0;
    if (!is_tensor(a) || !is_tensor(b)) {
        return NULL;
    }
    TensorObject *x = (TensorObject *)a, *y = (TensorObject *)b;
    if (x->backend != y->backend || x->dtype != y->dtype || PyTuple_GET_SIZE(x->shape) != 2
        || PyTuple_GET_SIZE(y->shape) != 2) {
        return NULL;
    }
    PyObject *m = PyTuple_GET_ITEM(x->shape, 0), *k1 = PyTuple_GET_ITEM(x->shape, 1);
    PyObject *k2 = PyTuple_GET_ITEM(y->shape, 0), *n = PyTuple_GET_ITEM(y->shape, 1);
    if (!PyLong_CheckExact(m) || !PyLong_CheckExact(k1) || !PyLong_CheckExact(k2)
        || !PyLong_CheckExact(n)) {
        return NULL;
    }
    Py_ssize_t mv = PyLong_AsSsize_t(m), k1v = PyLong_AsSsize_t(k1);
    Py_ssize_t k2v = PyLong_AsSsize_t(k2), nv = PyLong_AsSsize_t(n);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        return NULL;
    }
    /* matmul checks memory past this size (check_size): the Python path does that */
    if (k1v != k2v || mv < 0 || nv < 0 || (nv > 0 && mv > MatmulCheckFrom / nv)) {
        return NULL;
    }
    Hit h;
    if (!lookup(op, x->backend, x->dtype, FORM_MM, &h)) {
        return NULL;
    }
    PyObject *shape = PyTuple_Pack(2, m, n);
    PyObject *r = NULL;
    if (shape != NULL) {
        *taken = 1;
        r = call_kernel(&h, shape, a, b, NULL, DotKwvalues, DotKwnames, taken);
        Py_DECREF(shape);
    }
    hit_release(&h);
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
    PyObject *primitive, *fallback, *params = Py_None;
    int arity;
    static char *kwlist[] = {"primitive", "fallback", "arity", "params", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOi|O:Op", kwlist, &primitive, &fallback,
                                     &arity, &params)) {
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
    Py_VISIT(op->dict);
    for (int i = 0; i < op->n; i++) {
        Entry *e = &op->memo[i];
        Py_VISIT(e->backend);
        Py_VISIT(e->dtype);
        Py_VISIT(e->kernel);
        Py_VISIT(e->name);
        Py_VISIT(e->odt);
        Py_VISIT(e->payload);
        Py_VISIT(e->payload_type);
        Py_VISIT(e->scalar);
        Py_VISIT(e->operand);
    }
    return 0;
}

static int
op_clear(OpObject *op)
{
    Py_CLEAR(op->primitive);
    Py_CLEAR(op->fallback);
    Py_CLEAR(op->params);
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
        PyErr_Clear();
        return PyUnicode_FromString(otherwise);
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
    if (op->generation != Generation) {
        memo_clear(op);
        op->generation = Generation;
    }
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

/* ------------------------------------------------------------------ x[a:b:c] */

static OpObject *SliceOp = NULL;   /* getitem's Op: its memo keeps the slice kernel */
static OpObject *ReshapeOp = NULL; /* reshape's Op: its memo keeps the reshape kernel */

/* x[start:stop:step] on axis 0 with a positive step and int (or None) bounds: the
 * slice kernel with the plan the Python path would make (start, stop clamped as
 * numpy does; the other axes whole). */
static PyObject *
fast_slice(TensorObject *x, PyObject *key, int *taken)
{
    *taken = 0;
    PySliceObject *s = (PySliceObject *)key;
    if ((s->start != Py_None && !PyLong_CheckExact(s->start))
        || (s->stop != Py_None && !PyLong_CheckExact(s->stop))
        || (s->step != Py_None && !PyLong_CheckExact(s->step))) {
        return NULL;
    }
    Py_ssize_t nd = PyTuple_GET_SIZE(x->shape);
    if (nd == 0 || SliceOp == NULL || SliceKwnames == NULL) {
        return NULL;
    }
    PyObject *d0 = PyTuple_GET_ITEM(x->shape, 0);
    if (!PyLong_CheckExact(d0)) {
        return NULL;
    }
    Py_ssize_t dim = PyLong_AsSsize_t(d0), start, stop, step;
    if (dim < 0 || PySlice_Unpack(key, &start, &stop, &step) < 0) {
        PyErr_Clear();
        return NULL;
    }
    if (step <= 0) {
        return NULL; /* reversed: the Python path's plan */
    }
    Py_ssize_t len = PySlice_AdjustIndices(dim, &start, &stop, step);
    /* the plan numerix.ops.indexing makes: (0, 0, 1) for an empty slice, else the
       first index, one past the last, and the step */
    if (len == 0) {
        start = 0;
        stop = 0;
        step = 1;
    }
    else {
        stop = start + (len - 1) * step + 1;
    }
    if (len == dim && step == 1) {
        return NULL; /* the whole axis: the Python path returns x itself */
    }
    Hit h;
    if (!lookup(SliceOp, x->backend, x->dtype, FORM_SL, &h)) {
        return NULL;
    }
    *taken = 1; /* from here an error is the answer (out of memory) */
    PyObject *sliced = PyTuple_New(nd), *r = NULL, *v;
    PyObject *starts = NULL, *stops = NULL, *strides = NULL, *zero = NULL, *one = NULL;
    if (sliced == NULL || (v = PyLong_FromSsize_t(len)) == NULL) {
        goto done;
    }
    PyTuple_SET_ITEM(sliced, 0, v);
    for (Py_ssize_t i = 1; i < nd; i++) {
        PyObject *d = PyTuple_GET_ITEM(x->shape, i);
        Py_INCREF(d);
        PyTuple_SET_ITEM(sliced, i, d);
    }
    {
        /* the backend's shortcut takes the key itself: no plan tuples to build */
        PyObject *pargs[2] = {x->data, key};
        Py_INCREF(x->data);
        int done = try_payload(&h, sliced, pargs, 2, &r);
        Py_DECREF(pargs[0]);
        if (done != 0) {
            if (done < 0) {
                *taken = 0;
            }
            goto done;
        }
    }
    starts = PyTuple_New(nd);
    stops = PyTuple_New(nd);
    strides = PyTuple_New(nd);
    zero = PyLong_FromLong(0);
    one = PyLong_FromLong(1);
    if (starts == NULL || stops == NULL || strides == NULL || zero == NULL || one == NULL) {
        goto done;
    }
    if ((v = PyLong_FromSsize_t(start)) == NULL) {
        goto done;
    }
    PyTuple_SET_ITEM(starts, 0, v);
    if ((v = PyLong_FromSsize_t(stop)) == NULL) {
        goto done;
    }
    PyTuple_SET_ITEM(stops, 0, v);
    if ((v = PyLong_FromSsize_t(step)) == NULL) {
        goto done;
    }
    PyTuple_SET_ITEM(strides, 0, v);
    for (Py_ssize_t i = 1; i < nd; i++) {
        PyObject *d = PyTuple_GET_ITEM(x->shape, i);
        Py_INCREF(zero);
        PyTuple_SET_ITEM(starts, i, zero);
        Py_INCREF(d);
        PyTuple_SET_ITEM(stops, i, d);
        Py_INCREF(one);
        PyTuple_SET_ITEM(strides, i, one);
    }
    {
        PyObject *kw[3] = {starts, stops, strides};
        r = run_kernel(&h, sliced, (PyObject *)x, NULL, kw, SliceKwnames, taken);
    }
done:
    Py_XDECREF(starts);
    Py_XDECREF(stops);
    Py_XDECREF(strides);
    Py_XDECREF(sliced);
    Py_XDECREF(zero);
    Py_XDECREF(one);
    hit_release(&h);
    return r;
}

/* x[i] with a Python int i within axis 0: served only by the backend's shortcut, which
 * takes the payload and i (made non-negative) and returns what the Python path's slice
 * and reshape kernels store; anything else (no shortcut, a payload of another type: a
 * numpy scalar for a 1-d x) is the Python path's. */
static PyObject *
fast_index(TensorObject *x, PyObject *key, int *taken)
{
    *taken = 0;
    Py_ssize_t nd = PyTuple_GET_SIZE(x->shape);
    if (nd == 0 || SliceOp == NULL) {
        return NULL;
    }
    PyObject *d0 = PyTuple_GET_ITEM(x->shape, 0);
    Py_ssize_t dim = PyLong_CheckExact(d0) ? PyLong_AsSsize_t(d0) : -1;
    Py_ssize_t i = PyLong_AsSsize_t(key);
    if (dim < 0 || (i == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return NULL;
    }
    if (i < -dim || i >= dim) {
        return NULL; /* the Python path names the bounds */
    }
    if (i < 0) {
        i += dim;
    }
    Hit h;
    if (!lookup(SliceOp, x->backend, x->dtype, FORM_IX, &h)) {
        return NULL;
    }
    PyObject *r = NULL;
    if (h.payload != NULL) {
        PyObject *shape = PyTuple_GetSlice(x->shape, 1, nd);
        PyObject *pargs[2] = {x->data, PyLong_FromSsize_t(i)};
        if (shape == NULL || pargs[1] == NULL) {
            *taken = 1; /* out of memory: the answer */
        }
        else {
            Py_INCREF(pargs[0]);
            int done = try_payload(&h, shape, pargs, 2, &r);
            Py_DECREF(pargs[0]);
            *taken = done == 1;
        }
        Py_XDECREF(pargs[1]);
        Py_XDECREF(shape);
    }
    hit_release(&h);
    return r;
}

static PyObject *
tensor_getitem(PyObject *self, PyObject *key)
{
    if (PySlice_Check(key) && is_tensor(self)) {
        int taken = 0;
        PyObject *r = fast_slice((TensorObject *)self, key, &taken);
        if (taken) {
            return r;
        }
    }
    else if (PyLong_CheckExact(key) && is_tensor(self)) {
        int taken = 0;
        PyObject *r = fast_index((TensorObject *)self, key, &taken);
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

/* ------------------------------------------------------------------ reshape */

/* x.reshape((a, b, ...)) with a tuple of non-negative ints of x's size and another
 * shape: the reshape kernel, the tuple as the output's shape. */
static PyObject *
tensor_reshape(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (nargs == 1 && kwnames == NULL && PyTuple_CheckExact(args[0]) && is_tensor(self)
        && ReshapeOp != NULL) {
        TensorObject *x = (TensorObject *)self;
        PyObject *shape = args[0];
        Py_ssize_t n = PyTuple_GET_SIZE(shape), size = 1, want = 1;
        int ok = 1;
        for (Py_ssize_t i = 0; i < n && ok; i++) {
            PyObject *d = PyTuple_GET_ITEM(shape, i);
            if (!PyLong_CheckExact(d)) {
                ok = 0;
                break;
            }
            Py_ssize_t v = PyLong_AsSsize_t(d);
            if (v < 0 || (v > 0 && want > PY_SSIZE_T_MAX / v)) {
                PyErr_Clear();
                ok = 0;
                break;
            }
            want *= v;
        }
        Py_ssize_t nd = PyTuple_GET_SIZE(x->shape);
        for (Py_ssize_t i = 0; i < nd && ok; i++) {
            PyObject *d = PyTuple_GET_ITEM(x->shape, i);
            Py_ssize_t v = PyLong_Check(d) ? PyLong_AsSsize_t(d) : -1;
            if (v < 0 || (v > 0 && size > PY_SSIZE_T_MAX / v)) {
                PyErr_Clear();
                ok = 0;
                break;
            }
            size *= v;
        }
        if (ok && want == size) {
            int eq = PyObject_RichCompareBool(shape, x->shape, Py_EQ);
            if (eq == 0) {
                Hit h;
                if (lookup(ReshapeOp, x->backend, x->dtype, FORM_RS, &h)) {
                    int taken = 1;
                    PyObject *r = call_kernel(&h, shape, self, NULL, shape, NULL, NULL, &taken);
                    hit_release(&h);
                    if (taken) {
                        return r;
                    }
                }
            }
            else if (eq < 0) {
                PyErr_Clear();
            }
        }
    }
    if (ReshapeFallback == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "numerix: Tensor.reshape is not attached yet");
        return NULL;
    }
    /* the Python method, self first */
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
    PyObject *r = PyObject_Vectorcall(ReshapeFallback, all, 1 + nargs, kwnames);
    if (all != small) {
        PyMem_Free(all);
    }
    return r;
}

static PyMethodDef tensor_methods[] = {
    {"reshape", (PyCFunction)(void (*)(void))tensor_reshape, METH_FASTCALL | METH_KEYWORDS,
     "The same elements in C order with a new shape (numerix.reshape)."},
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
    Py_hash_t h = PyObject_Hash(t); /* an unhashable field: TypeError, as the tuple's */
    Py_DECREF(t);
    if (h == -1) {
        return NULL;
    }
    SignatureObject *sig = PyObject_GC_New(SignatureObject, &SignatureType);
    if (sig == NULL) {
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
    if (is_tensor(a)) {
        TensorObject *t = (TensorObject *)a;
        SignatureObject *sig = (SignatureObject *)t->sig;
        if (sig == NULL || sig->type != (PyObject *)Py_TYPE(a) || sig->shape != t->shape
            || sig->dtype != t->dtype || sig->backend != t->backend) {
            PyObject *fresh = signature_new((PyObject *)Py_TYPE(a), t->shape, t->dtype,
                                            t->backend);
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
        PyErr_Clear();
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
    PyObject *hit = PyDict_GetItemWithError(self->fast, key); /* borrowed */
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
        return jit_slow(self, args, nargsf, NULL);
    }
    Py_INCREF(hit); /* the dict may drop it while the program runs */
    PyObject *run = PyTuple_GET_ITEM(hit, 0), *rebuild = PyTuple_GET_ITEM(hit, 1);
    PyObject *token = PyTuple_GET_ITEM(hit, 2);
    PyObject *direct = size == 4 ? PyTuple_GET_ITEM(hit, 3) : Py_None;
    PyObject *hits = PyList_GET_ITEM(self->stats, 0);
    PyObject *more = PyNumber_Add(hits, One);
    if (more == NULL) {
        Py_DECREF(hit);
        return NULL;
    }
    PyList_SetItem(self->stats, 0, more); /* steals more */
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
                             "matmul_check_from", NULL};
    PyObject *tt, *resolver, *scalar, *intop;
    Py_ssize_t check_from;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!OOOn:configure", kwlist, &PyType_Type,
                                     &tt, &resolver, &scalar, &intop, &check_from)) {
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
    MatmulCheckFrom = check_from;
    Generation++;
    Py_RETURN_NONE;
}

static PyObject *
attach(PyObject *module, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"ops", "getitem", "reshape", "getitem_op", "reshape_op", NULL};
    PyObject *ops, *getitem, *reshape, *gop, *rop;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOO!O!:attach", kwlist, &ops, &getitem,
                                     &reshape, &OpType, &gop, &OpType, &rop)) {
        return NULL;
    }
    Py_INCREF(ops);
    Py_XSETREF(Ops, ops);
    Py_INCREF(getitem);
    Py_XSETREF(GetitemFallback, getitem);
    Py_INCREF(reshape);
    Py_XSETREF(ReshapeFallback, reshape);
    Py_INCREF(gop);
    Py_XSETREF(SliceOp, (OpObject *)gop);
    Py_INCREF(rop);
    Py_XSETREF(ReshapeOp, (OpObject *)rop);
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
     "configure(tensor_type, resolver, scalar_operand, int_operand, matmul_check_from): the "
     "Tensor type served, the rules' resolver, the scalar operands' makers, matmul's "
     "memory-check size."},
    {"attach", (PyCFunction)(void (*)(void))attach, METH_VARARGS | METH_KEYWORDS,
     "attach(ops, getitem, reshape, getitem_op, reshape_op): what Tensor's operators, "
     "x[key] and reshape call."},
    {"clear", clear, METH_NOARGS, "Drop what every Op has memoised (a backend changed)."},
    {NULL}
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "numerix._speedups",
    .m_doc = "The compiled fast path of numerix's hot ops (docs/decisions.md 38).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    if (PyType_Ready(&TensorBaseType) < 0 || PyType_Ready(&OpType) < 0
        || PyType_Ready(&JitCallType) < 0 || PyType_Ready(&SignatureType) < 0) {
        return NULL;
    }
    str_add = PyUnicode_InternFromString("add");
    str_subtract = PyUnicode_InternFromString("subtract");
    str_multiply = PyUnicode_InternFromString("multiply");
    str_divide = PyUnicode_InternFromString("divide");
    str_matmul = PyUnicode_InternFromString("matmul");
    DotKwnames = Py_BuildValue("(ssss)", "contract_x", "batch_x", "contract_y", "batch_y");
    DotKwvalues[0] = Py_BuildValue("(i)", 1);
    DotKwvalues[1] = PyTuple_New(0);
    DotKwvalues[2] = Py_BuildValue("(i)", 0);
    DotKwvalues[3] = PyTuple_New(0);
    SliceKwnames = Py_BuildValue("(sss)", "start", "stop", "strides");
    ReduceKwnames = Py_BuildValue("(sss)", "kind", "axes", "keepdims");
    EmptyTuple = PyTuple_New(0);
    for (Py_ssize_t nd = 0; nd <= MAX_REDUCE_NDIM; nd++) {
        PyObject *t = PyTuple_New(nd);
        for (Py_ssize_t i = 0; t != NULL && i < nd; i++) {
            PyObject *v = PyLong_FromSsize_t(i);
            if (v == NULL) {
                Py_CLEAR(t);
                break;
            }
            PyTuple_SET_ITEM(t, i, v);
        }
        if (t == NULL) {
            return NULL;
        }
        AxesTuples[nd] = t;
    }
    if (ReduceKwnames == NULL || EmptyTuple == NULL) {
        return NULL;
    }
    One = PyLong_FromLong(1);
    if (str_add == NULL || str_subtract == NULL || str_multiply == NULL || str_divide == NULL
        || str_matmul == NULL || DotKwnames == NULL || DotKwvalues[0] == NULL
        || DotKwvalues[1] == NULL || DotKwvalues[2] == NULL || DotKwvalues[3] == NULL
        || SliceKwnames == NULL || One == NULL) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&speedups_module);
    if (m == NULL) {
        return NULL;
    }
    Py_INCREF(&TensorBaseType);
    if (PyModule_AddObject(m, "TensorBase", (PyObject *)&TensorBaseType) < 0) {
        Py_DECREF(&TensorBaseType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&JitCallType);
    if (PyModule_AddObject(m, "JitCall", (PyObject *)&JitCallType) < 0) {
        Py_DECREF(&JitCallType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&SignatureType);
    if (PyModule_AddObject(m, "Signature", (PyObject *)&SignatureType) < 0) {
        Py_DECREF(&SignatureType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&OpType);
    if (PyModule_AddObject(m, "Op", (PyObject *)&OpType) < 0) {
        Py_DECREF(&OpType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

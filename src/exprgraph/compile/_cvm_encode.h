/* _cvm_encode.h: the straight-line encoder's state and steps, shared by encode_flat (_cvm_encode.c: operands
 * found by the nodes' marks) and encode_walked (_cvm_walked.c: operands found in the walk's arrays). */
#ifndef EXPRGRAPH_CVM_ENCODE_H
#define EXPRGRAPH_CVM_ENCODE_H

#include "_cvm_terms.h"

enum { KD = 0, KI = 1 };

typedef struct {
    Vec saved;              /* the stamped terms' words */
    Vec kinds, pinned;      /* int32 by value: register file, a constant */
    Vec dtype;              /* int8 by value: its dtype index */
    Vec code;               /* int32 words */
    Vec cd_vid, ci_vid;     /* int32: the constants' values, per file */
    Vec cd_val, ci_val;     /* double / int64: their numbers */
    Vec c_dtype;            /* int8 by compile-time value: dtype index */
    Vec c_num;              /* by compile-time value: its number (a double, or an int64 in the same 8 bytes) */
    Vec in_vid;             /* int32: the inputs' values */
    Vec run_pos;            /* int32: the positions of the run outputs */
    uint8_t *stored;        /* by output position: stores done (first positions only) */
    int32_t *next, *run;    /* by output position: the next position of the same term; its run index */
    PyObject *const *tables; /* unary, binary, folds, powers: op name -> opcode */
} Enc;

static inline int kind_of_dtype(int d) { return d == D_FLOAT64 ? KD : (d == D_INT64 || d == D_BOOL) ? KI : -1; }

/* the value of operand i of a step (ctx: the step, as the caller knows it); -1 error, -2 the twin must run */
typedef int32_t (*EncOperand)(Enc *e, void *ctx, Py_ssize_t i);

int32_t enc_new_value(Enc *e, int kind, int dtype, int pinned);
int32_t enc_constant(Enc *e, int32_t c);
int enc_emit(Enc *e, int32_t op, int32_t a, int32_t b, int32_t c, int32_t d);
int enc_store_at(Enc *e, int64_t j, int32_t v);
int enc_read_values(Enc *e, PyObject *values, PyObject *generic);
int32_t enc_instructions(Enc *e, PyObject *name, int dtype, Py_ssize_t n, EncOperand get, void *ctx);
int enc_tables_ok(PyObject *tables);
int enc_start(Enc *e, Py_ssize_t n_out, PyObject *tables);
PyObject *enc_result(Enc *e, PyObject *outputs);
PyObject *enc_finish(Enc *e, int status, PyObject *outputs);
void enc_free(Enc *e);

#endif

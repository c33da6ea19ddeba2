/*
 * schema_internal.h - what the key tables of schema.c (hardware, calibration and workload
 * files) and schema_scenario.c (the scenario file) share, private to src/config/: the macros
 * that write one table row each, and the enumeration words keys of both use (NCCL algorithms
 * and protocols: nccl.algo and a calibrated collective's algo).
 */
#ifndef SIMTRAIN_CONFIG_SCHEMA_INTERNAL_H
#define SIMTRAIN_CONFIG_SCHEMA_INTERNAL_H

#include <stddef.h>

#include "config/schema.h"

#define INT_LIM     1073741824.0 /* 2^30: products of a few ints stay far below INT64_MAX */
#define MSIZE(T, m) sizeof(((T *)0)->m)
#define AT(T, m)    .off = offsetof(T, m), .size = MSIZE(T, m)

#define INT(k, T, m, lo, d) .key = k, .type = FT_INT, AT(T, m), .min = lo, .max = INT_LIM, .def = d
/* An integer with a bound of its own below 2^30 (a count of parts on one node or GPU). */
#define INTM(k, T, m, lo, hi, d) .key = k, .type = FT_INT, AT(T, m), .min = lo, .max = hi, .def = d
#define NUM(k, T, m, lo, hi, d)  .key = k, .type = FT_FLOAT, AT(T, m), .min = lo, .max = hi, .def = d
#define QTY(k, T, m, u, d)       .key = k, .type = FT_QTY, AT(T, m), .unit = u, .def = d
#define BOOL(k, T, m, d)         .key = k, .type = FT_BOOL, AT(T, m), .def = d
#define ENUM(k, T, m, tbl, d)    .key = k, .type = FT_ENUM, AT(T, m), .names = tbl, .def = d
#define STR(k, T, m)             .key = k, .type = FT_STR, AT(T, m)
#define TEXT(k)                  .key = k, .type = FT_STR, .off = NO_STORE
#define SECT(k, T, m, s)         .key = k, .type = FT_SECTION, AT(T, m), .sub = &s
#define SECT0(k, s)              .key = k, .type = FT_SECTION, .off = 0, .sub = &s
#define SECTION(nm, rows, fl)                                                                      \
    {                                                                                              \
        .name = nm, .fields = rows, .nfields = ARRAY_LEN(rows), .flags = fl                        \
    }

/* NCCL algorithm and protocol words (the spellings of names.c; schema.c). */
extern const struct enum_name schema_algo_names[];
extern const struct enum_name schema_proto_names[];

#endif

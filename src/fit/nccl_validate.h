/*
 * nccl_validate.h - `simtrain collective --validate CSV`: the collective
 * model alone (calibration files ignored, since calibrations are fitted to
 * these very figures) against published NCCL measurements
 * (tests/validation/nccl.csv, the format of validation/sources/nccl.csv),
 * row by row as nccl-tests ran them (net/bench.h), and summarized per band of
 * message size and source.
 */
#ifndef SIMTRAIN_NCCL_VALIDATE_H
#define SIMTRAIN_NCCL_VALIDATE_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Compare the model with the measurements in the CSV at `path`; print one row
 * per measurement and a summary per band to `out` (Markdown tables when
 * `markdown`). Returns 0, or 1 when the file cannot be read or a hardware
 * description fails to load (message on stderr).
 */
int nccl_validate_file(const char *path, bool markdown, FILE *out);

/* The summary bands: 8-GPU nodes by operation and size, several nodes, stated figures. */
enum nccl_band_id {
    NCCL_BAND_AR_LARGE,
    NCCL_BAND_AR_SMALL,
    NCCL_BAND_AGRS_LARGE,
    NCCL_BAND_AGRS_SMALL,
    NCCL_BAND_P2P,
    NCCL_BAND_MULTINODE,
    NCCL_BAND_STATEMENT,
    NCCL_BAND_COUNT
};

struct nccl_band {
    const char *name;   /* static */
    int n, within;      /* rows, and rows within the target */
    double median, max; /* |relative error| */
    double target;      /* the band's accuracy target, fraction */
};

/* The bands of `path` without printing; 0, or 1 as nccl_validate_file(). */
int nccl_validate_bands(const char *path, struct nccl_band out[NCCL_BAND_COUNT]);

#endif

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

#endif

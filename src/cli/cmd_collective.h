/*
 * cmd_collective.h - what the two files of `simtrain collective` share:
 * cmd_collective.c (arguments, the table, the chart) and
 * cmd_collective_validate.c (`--validate`).
 */
#ifndef SIMTRAIN_CMD_COLLECTIVE_H
#define SIMTRAIN_CMD_COLLECTIVE_H

#include <stdbool.h>

#include "net/collective.h"
#include "model/hardware.h"

/*
 * The group of n GPUs on `nodes` nodes of hw (0 = as few as hold them): the
 * first n / nodes GPUs of each node, or with nodes = 0 the first n GPUs,
 * filling nodes in order; n must not exceed nodes * hw->gpus_per_node (the
 * callers check). *last receives the group's last GPU id. The caller frees
 * the returned topology with topo_free().
 */
struct topo *cmd_collective_place(const struct hardware *hw, int n, int nodes, struct comm_group *g,
                                  int *last);

/*
 * Compare the model with the measurements in the CSV at `path`; print one row
 * per measurement and a summary per band to stdout (Markdown tables when
 * `markdown`). Returns 0, 1 when the file cannot be read or a hardware
 * description fails to load (message on stderr).
 */
int cmd_collective_validate(const char *path, bool markdown);

#endif

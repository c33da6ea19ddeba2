/*
 * flow.h - flow-level bandwidth sharing by max-min fairness.
 *
 * Links are capacity constraints (bytes/s), flows are rate variables. A flow
 * crosses a set of links and may carry its own rate cap (a collective's
 * bandwidth in isolation). flow_solve() computes the unique max-min fair
 * allocation: no flow can get more without taking from a flow that has no
 * more than it. This is SimGrid's lmm solver reduced to the plain max-min
 * case (no weights, no bounds other than the per-flow cap): progressive
 * filling, where the most constrained link (smallest remaining capacity per
 * unfixed flow) is saturated first and its flows are fixed at that share
 * (Bertsekas & Gallager, "Data Networks", 2nd ed., sec. 6.5.2).
 *
 * Determinism: every choice is ordered by value and then by the lowest index
 * (link id, then flow id), so the same calls give the same rates on every
 * machine. Rates change only when flow_solve() runs; the caller re-solves
 * when a flow starts or ends (STYLE.md, "Bandwidth sharing").
 *
 * Memory: the net owns everything it allocates; flow_free() releases it.
 * Link ids are dense from 0; flow ids are slots, and a removed flow's slot is
 * reused by the next flow_add() (lowest free slot first).
 */
#ifndef SIMTRAIN_FLOW_H
#define SIMTRAIN_FLOW_H

struct flow_net;

/* A new, empty network. Never NULL (allocation failure aborts). */
struct flow_net *flow_new(void);

/* Free a network and all its links and flows; NULL is accepted. */
void flow_free(struct flow_net *net);

/* Add a link of capacity cap_Bps (> 0, bytes/s); returns its id (0, 1, 2, ...). */
int flow_link_add(struct flow_net *net, double cap_Bps);

/* Number of links added so far. */
int flow_link_count(const struct flow_net *net);

/*
 * Add a flow over `nlinks` link ids (copied; duplicates count once), with its
 * own rate cap cap_Bps (bytes/s; <= 0 or infinity means uncapped, which needs
 * at least one link). Returns the flow id. Its rate is 0 until flow_solve().
 */
int flow_add(struct flow_net *net, double cap_Bps, const int *links, int nlinks);

/* Remove a live flow; its id may be handed out again by flow_add(). */
void flow_remove(struct flow_net *net, int flow);

/* Recompute every live flow's max-min fair rate (no-op when nothing changed). */
void flow_solve(struct flow_net *net);

/* The rate of a live flow from the last flow_solve(), bytes/s. */
double flow_rate(const struct flow_net *net, int flow);

/* Live flows. */
int flow_count(const struct flow_net *net);

#endif

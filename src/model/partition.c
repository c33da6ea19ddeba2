/*
 * partition.c - how transformer layers are split over pipeline stages and
 * model chunks (see partition.h). One rule for the loader, the builder and
 * the plan estimator.
 */
#include "model/partition.h"

#include <assert.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

int pp_partition(int layers, int pp, int v, int first, int last, int *out, char *reason,
                 size_t reason_len)
{
    int given = 0, sum = 0, rest, share, st, c;

    assert(pp >= 1 && v >= 1);
    if (pp == 1) {
        first = last = 0;
    }
    if (first < 0 || last < 0 || first + last > layers) {
        snprintf(reason, reason_len, "first and last stage layers (%d + %d) exceed layers (%d)",
                 first, last, layers);
        return -1;
    }
    given = (first > 0) + (pp > 1 && last > 0);
    sum = first + (pp > 1 ? last : 0);
    rest = layers - sum;
    if (given == pp) {
        share = 0;
        if (rest != 0) {
            snprintf(reason, reason_len,
                     "first and last stage layers (%d + %d) do not add up to layers (%d)", first,
                     last, layers);
            return -1;
        }
    } else {
        share = rest / (pp - given);
        if (rest % (pp - given)) {
            snprintf(reason, reason_len, "%d layers do not split evenly over %d pipeline stages",
                     rest, pp - given);
            return -1;
        }
    }
    for (st = 0; st < pp; st++) {
        int n = st == 0 && first > 0 ? first : st == pp - 1 && pp > 1 && last > 0 ? last : share;
        int q = n / v, r = n % v;
        for (c = 0; c < v; c++) {
            /* the shortfall falls on the embedding's chunk (stage 0) or else on the last chunks */
            bool extra = st == 0 ? c >= v - r : c < r;
            out[c * pp + st] = q + (extra ? 1 : 0);
        }
    }
    return 0;
}

/*
 * The scenario's split: `first_stage_layers` / `last_stage_layers` when given
 * (Megatron's decoder_first/last_pipeline_num_layers); otherwise even when
 * pp * vpp divides the layers, and else, when it divides layers + 2, the
 * embedding and the loss each count as one layer (Megatron's
 * account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split;
 * Llama 3 405B's 126 layers on 16 stages, Llama Team 2024 §3.3.2).
 */
void pp_split(const struct scenario *s, int *first, int *last)
{
    int n = s->par.pp * s->par.vpp, layers = s->model.layers;

    *first = s->par.first_stage_layers;
    *last = s->par.last_stage_layers;
    if (*first > 0 || *last > 0 || s->par.pp <= 1)
        return;
    if (layers % n != 0 && (layers + 2) % n == 0)
        *first = *last = (layers + 2) / n * s->par.vpp - 1;
}

int pp_check(const struct scenario *s, char *reason, size_t reason_len)
{
    int first, last, rc;
    int *out = xmalloc(sizeof(int) * (size_t)s->par.pp * (size_t)s->par.vpp);

    pp_split(s, &first, &last);
    rc = pp_partition(s->model.layers, s->par.pp, s->par.vpp, first, last, out, reason, reason_len);
    free(out);
    return rc;
}

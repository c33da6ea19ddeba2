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
        if (share == 0) {
            snprintf(reason, reason_len,
                     "first and last stage layers (%d + %d) of %d layers leave the other %d "
                     "pipeline stage%s without a layer",
                     first, pp > 1 ? last : 0, layers, pp - given, pp - given > 1 ? "s" : "");
            return -1;
        }
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

/* out[c * pp + st] from the layers of each virtual stage in pipeline order (v = c * pp + st). */
static void by_virtual_stage(const int *vs, int pp, int v, int *out)
{
    for (int c = 0; c < v; c++)
        for (int st = 0; st < pp; st++)
            out[c * pp + st] = vs[c * pp + st];
}

/*
 * Megatron-Core's account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split
 * (megatron/core/transformer/transformer_block.py get_num_layers_to_build, L52-160
 * @core_v0.12.0): the embedding (emb) and the loss (loss) count as layers, layers + emb + loss
 * split evenly over the pp stages (asserted divisible), each stage's share evenly over its v
 * chunks (asserted divisible); the first virtual stage (stage 0, chunk 0) builds one layer fewer
 * for the embedding, the last (last stage, last chunk) one fewer for the loss.
 */
static int split_megatron(int layers, int pp, int v, int emb, int loss, int *vs, char *reason,
                          size_t reason_len)
{
    int n = pp * v, total = layers + emb + loss, per;
    const char *what = emb && loss ? "embedding and loss" : emb ? "embedding" : "loss";

    if (total % pp || (total / pp) % v) {
        snprintf(reason, reason_len,
                 "pp * vpp (%d * %d) does not divide layers + %d (%d: the %s counted as "
                 "layers, Megatron-Core's account_for_*_in_pipeline_split)",
                 pp, v, emb + loss, total, what);
        return -1;
    }
    per = total / n;
    for (int i = 0; i < n; i++)
        vs[i] = per - (emb && i == 0) - (loss && i == n - 1);
    for (int i = 0; i < n; i++)
        if (vs[i] < 1) {
            snprintf(reason, reason_len,
                     "%d layers leave the %s virtual pipeline stage without a layer (the %s "
                     "counted as layers)",
                     layers, i == 0 ? "first" : "last", what);
            return -1;
        }
    return 0;
}

/*
 * torchtitan's split points when the job gives none, over S = pp * v virtual stages in
 * pipeline order. 2024-12 (torchtitan/parallelisms/pipelining_utils.py generate_split_points,
 * L18-57 @9dec370): base = L // S layers to stage 0, base + 1 to the middle stages while the
 * extras L % S last, the rest to the last stage. `weighted`, v0.1.0 on
 * (torchtitan/distributed/pipeline.py generate_split_points, L27-121 @f7084fc): the embedding
 * and the output weigh one layer each, E = L + 2 split as E // S per stage with the extras
 * E % S to the first stages, stage 0 one layer fewer, the last stage the rest.
 */
static int split_torchtitan(int layers, int pp, int v, bool weighted, int *vs, char *reason,
                            size_t reason_len)
{
    int n = pp * v, eff = layers + (weighted ? 2 : 0), per = eff / n, extra = eff % n, sum = 0;

    if (n > eff || (weighted && per < 1)) {
        snprintf(reason, reason_len,
                 "%d pipeline stages (pp * vpp) exceed the %slayers (%d) torchtitan splits", n,
                 weighted ? "effective " : "", eff);
        return -1;
    }
    for (int i = 0; i < n - 1; i++) {
        int k = per - (weighted && i == 0);
        if (extra > 0 && (weighted || i > 0)) {
            k++;
            extra--;
        }
        vs[i] = k;
        sum += k;
    }
    vs[n - 1] = layers - sum;
    for (int i = 0; i < n; i++)
        if (vs[i] < 1) {
            snprintf(reason, reason_len,
                     "torchtitan's split leaves pipeline stage %d without layers", i);
            return -1;
        }
    return 0;
}

/* Does every stage hold the same layers in each of its v chunks? 0, or -1 with a reason. */
static int chunks_even(const int *out, int pp, int v, char *reason, size_t reason_len)
{
    for (int st = 0; st < pp; st++)
        for (int c = 1; c < v; c++)
            if (out[c * pp + st] != out[st]) {
                int n = 0;
                for (int k = 0; k < v; k++)
                    n += out[k * pp + st];
                snprintf(reason, reason_len,
                         "vpp (%d) does not divide the %d layers of pipeline stage %d: "
                         "Megatron-Core splits each stage's layers evenly over its chunks "
                         "(parallelism.pp_split even)",
                         v, n, st);
                return -1;
            }
    return 0;
}

int pp_layers(const struct scenario *s, int *out, char *reason, size_t reason_len)
{
    int pp = s->par.pp, v = s->par.vpp, n = pp * v, layers = s->model.layers, first, last, rc;
    int *vs;
    bool account = s->par.pp_split == SPLIT_MEGATRON || s->par.pp_split == SPLIT_MEGATRON_EMB ||
                   s->par.pp_split == SPLIT_MEGATRON_LOSS;

    if ((s->par.first_stage_layers > 0 || s->par.last_stage_layers > 0) && pp > 1 && account) {
        /* transformer_block.py L63-68 @core_v0.12.0: "Does not support standalone embedding
           stage and standalone loss stage with uneven pp" */
        snprintf(reason, reason_len,
                 "first_stage_layers / last_stage_layers cannot be combined with the embedding "
                 "or loss counted as layers (pp_split %s), as Megatron-Core asserts",
                 s->par.pp_split == SPLIT_MEGATRON       ? "megatron"
                 : s->par.pp_split == SPLIT_MEGATRON_EMB ? "megatron_embedding"
                                                         : "megatron_loss");
        return -1;
    }
    if (s->par.first_stage_layers > 0 || s->par.last_stage_layers > 0 || pp == 1 ||
        s->par.pp_split == SPLIT_AUTO) {
        pp_split(s, &first, &last);
        rc = pp_partition(layers, pp, v, first, last, out, reason, reason_len);
        /* Megatron-Core splits every stage's layers evenly over its chunks, the uneven first
           and last stages' too (transformer_block.py L122-129 @core_v0.12.0) */
        if (rc == 0 && s->par.pp_split == SPLIT_EVEN)
            rc = chunks_even(out, pp, v, reason, reason_len);
        return rc;
    }
    if (s->par.pp_split == SPLIT_EVEN) {
        if (layers % n) {
            snprintf(reason, reason_len,
                     "pp * vpp (%d * %d) does not divide layers (%d): the framework splits them "
                     "evenly (parallelism.pp_split even; set first_stage_layers / "
                     "last_stage_layers or another pp_split)",
                     pp, v, layers);
            return -1;
        }
        return pp_partition(layers, pp, v, 0, 0, out, reason, reason_len);
    }
    vs = xmalloc(sizeof(int) * (size_t)n);
    if (s->par.pp_split == SPLIT_MEGATRON || s->par.pp_split == SPLIT_MEGATRON_EMB ||
        s->par.pp_split == SPLIT_MEGATRON_LOSS)
        rc = split_megatron(layers, pp, v, s->par.pp_split != SPLIT_MEGATRON_LOSS,
                            s->par.pp_split != SPLIT_MEGATRON_EMB, vs, reason, reason_len);
    else
        rc = split_torchtitan(layers, pp, v, s->par.pp_split == SPLIT_TORCHTITAN_W, vs, reason,
                              reason_len);
    if (rc == 0)
        by_virtual_stage(vs, pp, v, out);
    free(vs);
    return rc;
}

int pp_check(const struct scenario *s, char *reason, size_t reason_len)
{
    int rc;
    int *out = xmalloc(sizeof(int) * (size_t)s->par.pp * (size_t)s->par.vpp);

    rc = pp_layers(s, out, reason, reason_len);
    free(out);
    return rc;
}

/*
 * memtrack.c - the memory tracker (sim_internal.h): per rank, the bytes held per category
 * (rank_result.cur), their sum, the peak with each category's share at that moment, and the
 * caching allocator's reserve (MC_RESERVE), which follows the tensors allocated and freed
 * within the step. Tasks' memory marks (prog.h) feed it when they start and end. Beside the
 * peak of everything it keeps the two high-water marks PyTorch reports: allocated (tensors:
 * torch.cuda.max_memory_allocated) and reserved (tensors and the allocator's reserve,
 * torch.cuda.max_memory_reserved, what torchtitan logs), both without MC_OVERHEAD, the CUDA
 * context and NCCL's buffers outside the caching allocator.
 */
#include <math.h>
#include <string.h>

#include "engine/sim_internal.h"

void memtrack_init(struct sim *sm)
{
    double f = sm->sc->train.fragmentation;

    sm->reserve_per_byte = f / (1 - f);
    sm->capacity = sm->sc->hw.gpu.mem_bytes < (double)SIM_MEM_LIMIT
                       ? (int64_t)sm->sc->hw.gpu.mem_bytes
                       : SIM_MEM_LIMIT; /* the loader keeps it below 1 PiB (config/limits.c) */
}

/*
 * The caching allocator's reserve follows the tensors allocated and freed within the step
 * (activations, logits, gathered parameters): a fraction f of what it holds for them is free
 * but unusable, so it holds f / (1 - f) bytes more than they occupy (docs/memory.md). Model
 * states and buffers allocated once at time zero do not fragment. The reserve is soft: when
 * cudaMalloc fails, PyTorch's allocator releases its cached blocks and retries
 * (CUDACachingAllocator.cpp, release_cached_blocks), so it never takes more than the GPU has
 * free; whether a run fits is decided by what is allocated.
 */
static inline bool churned(int cat)
{
    return cat == MC_ACT || cat == MC_LOGITS || cat == MC_GATHERED;
}

void memtrack_apply(struct sim *sm, int ri, int cat, int64_t delta, const int64_t *mod)
{
    struct rank_result *rr = &sm->res->ranks[ri];
    struct srank *r = &sm->r[ri];
    int64_t total;

    if (delta == 0)
        return;
    rr->cur[cat] = mem_add(rr->cur[cat], delta);
    assert(rr->cur[cat] >= 0 && "memory freed twice");
    if (mod) /* the mark's bytes by module (prog_mem_modules()) */
        for (int m = 0; m < MM_COUNT; m++)
            rr->mod_cur[m] += mod[m];
    if (churned(cat))
        r->churn = mem_add(r->churn, delta);
    if (r->churn > 0 || rr->cur[MC_RESERVE] > 0) {
        double w = sm->reserve_per_byte * (double)r->churn; /* <= 9 * 2^62: clamped below */
        int64_t want = w < (double)SIM_MEM_SAT ? llround(w) : SIM_MEM_SAT;
        int64_t room = sm->capacity - mem_add(r->mem, delta - rr->cur[MC_RESERVE]);
        int64_t reserve = MAX(0, MIN(want, room));

        if (room >= 0 && want - reserve > rr->reserve_short)
            rr->reserve_short = want - reserve;
        delta += reserve - rr->cur[MC_RESERVE];
        rr->cur[MC_RESERVE] = reserve;
    }
    total = r->mem = mem_add(r->mem, delta);
    {
        int64_t held = total - rr->cur[MC_OVERHEAD]; /* the caching allocator's */

        if (held > rr->peak_reserved)
            rr->peak_reserved = held;
        if (held - rr->cur[MC_RESERVE] > rr->peak_allocated)
            rr->peak_allocated = held - rr->cur[MC_RESERVE];
    }
    if (total > rr->peak) {
        rr->peak = total;
        rr->peak_t = sm->eng.now;
        memcpy(rr->at_peak, rr->cur, sizeof(rr->cur));
        memcpy(rr->mod_at_peak, rr->mod_cur, sizeof(rr->mod_cur));
    }
    if (r->traced)
        notes_memory(sm, ri);
}

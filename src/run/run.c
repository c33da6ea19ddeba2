/* run.c - see run.h. */
#include "run/run.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "model/cost.h"
#include "run/predict.h"
#include "strategy/strategy.h"
#include "model/workload.h"

/* run_metrics(), once computed. */
struct run_memo {
    bool ready;
    struct run_metrics m;
};

static void headline(struct run *r)
{
    const struct scenario *s = r->s;
    int i;

    r->step_s = (double)r->sim.step / NS_PER_S;
    r->tokens_per_step = (double)s->train.global_batch * s->train.seq_len;
    r->tokens_per_s = r->step_s > 0 ? r->tokens_per_step / r->step_s : 0;
    r->tokens_per_s_per_gpu = r->tokens_per_s / s->gpus;
    r->model_flops = workload_model_flops(s);
    r->peak_flops = cost_peak_flops(&s->hw.gpu, s->train.precision);
    r->mfu = r->step_s > 0 ? r->model_flops / (r->step_s * s->gpus * r->peak_flops) : 0;
    r->hw_flops = workload_hardware_flops(s);
    r->hfu = r->step_s > 0 ? r->hw_flops / (r->step_s * s->gpus * r->peak_flops) : 0;
    r->peak_idx = 0;
    r->peak_bytes = 0;
    for (i = 0; i < r->sim.nranks; i++) {
        if ((double)r->sim.ranks[i].peak > r->peak_bytes) {
            r->peak_bytes = (double)r->sim.ranks[i].peak;
            r->peak_idx = i;
        }
    }
    r->peak_allocated_bytes = r->peak_reserved_bytes = 0;
    for (i = 0; i < r->sim.nranks; i++) {
        r->peak_allocated_bytes =
            MAX(r->peak_allocated_bytes, (double)r->sim.ranks[i].peak_allocated);
        r->peak_reserved_bytes = MAX(r->peak_reserved_bytes, (double)r->sim.ranks[i].peak_reserved);
    }
    r->capacity_bytes = s->hw.gpu.mem_bytes;
    r->fits = r->peak_bytes <= r->capacity_bytes;
    r->reserve_short_bytes = 0;
    for (i = 0; i < r->sim.nranks; i++)
        r->reserve_short_bytes = MAX(r->reserve_short_bytes, (double)r->sim.ranks[i].reserve_short);
}

int run_scenario(const struct scenario *s, const struct sim_opts *opts, struct run *out,
                 char *reason, size_t reason_len)
{
    memset(out, 0, sizeof(*out));
    out->s = s;
    layout_init(&out->lay, s);
    out->nprogs = s->par.pp;
    out->progs = xcalloc((size_t)out->nprogs, sizeof(*out->progs));
    if (strategy_build(s, &out->lay, out->progs, reason, reason_len) != 0) {
        run_release(out);
        return -1;
    }
    if (sim_run(s, &out->lay, out->progs, opts, &out->sim, reason, reason_len) != 0) {
        run_release(out);
        return -1;
    }
    headline(out);
    out->memo = xcalloc(1, sizeof(*out->memo));
    return 0;
}

void run_release(struct run *r)
{
    int i;

    for (i = 0; i < r->nprogs; i++)
        prog_free(r->progs ? r->progs[i] : NULL);
    free(r->progs);
    sim_result_release(&r->sim);
    free(r->memo);
    memset(r, 0, sizeof(*r));
}

const struct run_metrics *run_metrics(const struct run *r)
{
    struct run_memo *mm = r->memo;

    assert(mm && "run_metrics() of a run that run_scenario() did not fill");
    if (!mm->ready) {
        metrics_compute(r->s, &r->lay, r->progs, r->nprogs, &r->sim, r->step_s, &mm->m);
        mm->ready = true;
    }
    return &mm->m;
}

int predict_scenario(const struct scenario *s, struct prediction *out, char *reason,
                     size_t reason_len)
{
    struct sim_opts opts = { 0 };
    struct run r;

    memset(out, 0, sizeof(*out));
    if (run_scenario(s, &opts, &r, reason, reason_len) != 0)
        return -1;
    out->step_time_s = r.step_s;
    out->tokens_per_s = r.tokens_per_s;
    out->tokens_per_s_per_gpu = r.tokens_per_s_per_gpu;
    out->mfu = r.mfu;
    out->peak_mem_bytes = r.peak_bytes;
    out->peak_reserved_bytes = r.peak_reserved_bytes;
    out->capacity_bytes = r.capacity_bytes;
    out->fits = r.fits;
    run_release(&r);
    return 0;
}

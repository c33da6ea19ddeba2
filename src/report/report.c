/*
 * report.c - the terminal report of one simulated step: configuration, step
 * time and where it goes, throughput and MFU, and per-GPU memory against
 * capacity with a plain verdict. Meant to be read in ten seconds.
 */
#include "report/report.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/cost.h"
#include "model/layout.h"
#include "model/workload.h"
#include "report/band.h"

static void fmt_bytes(double b, char *buf, size_t n)
{
    const double gib = 1024.0 * 1024.0 * 1024.0, mib = 1024.0 * 1024.0;

    if (fabs(b) >= gib)
        snprintf(buf, n, "%.1f GiB", b / gib);
    else if (fabs(b) >= mib)
        snprintf(buf, n, "%.1f MiB", b / mib);
    else
        snprintf(buf, n, "%.0f KiB", b / 1024.0);
}

void report_fmt_time(double s, char *buf, size_t n)
{
    if (s >= 100)
        snprintf(buf, n, "%.1f s", s);
    else if (s >= 1)
        snprintf(buf, n, "%.3f s", s);
    else if (s >= 1e-3)
        snprintf(buf, n, "%.2f ms", s * 1e3);
    else
        snprintf(buf, n, "%.1f us", s * 1e6);
}

static void fmt_count(double v, char *buf, size_t n)
{
    if (v >= 1e12)
        snprintf(buf, n, "%.2f T", v / 1e12);
    else if (v >= 1e9)
        snprintf(buf, n, "%.2f B", v / 1e9);
    else if (v >= 1e6)
        snprintf(buf, n, "%.2f M", v / 1e6);
    else
        snprintf(buf, n, "%.0f", v);
}

/* Which framework profile ran, what it set and what the scenario set instead. */
static void framework_line(FILE *f, const struct scenario *s)
{
    const struct fw_state *fw = &s->fw;
    int applied = fw_count(fw, FWS_APPLIED), over = fw_count(fw, FWS_OVERRIDDEN), shown = 0;

    if (!fw->name || !fw->nsettings) {
        fprintf(f, "  framework  %s%s%s (no profile settings)\n", fw->name ? fw->name : "other",
                fw->version && *fw->version ? " " : "", fw->version ? fw->version : "");
        if (fw->reading)
            fprintf(f, "             framework_version %s\n", fw->reading);
        return;
    }
    fprintf(f, "  framework  %s %s: %d default%s applied", fw->name, fw->version, applied,
            applied == 1 ? "" : "s");
    if (over > 0) {
        fprintf(f, ", %d set by the scenario (", over);
        for (int i = 0; i < fw->nsettings; i++) {
            bool dup = false;
            if (fw_setting_status(fw, i) != FWS_OVERRIDDEN)
                continue;
            for (int k = 0; k < i; k++)
                dup |= fw_setting_status(fw, k) == FWS_OVERRIDDEN &&
                       strcmp(fw->settings[k].key, fw->settings[i].key) == 0;
            if (!dup)
                fprintf(f, "%s%s", shown++ ? ", " : "", fw->settings[i].key);
        }
        fputc(')', f);
    }
    fputc('\n', f);
    if (fw->reading)
        fprintf(f, "             framework_version %s\n", fw->reading);
}

/* "selective", "selective (torchtitan op save list)", "full (every 2nd block)". */
static void recompute_text(const struct scenario *s, char *buf, size_t n)
{
    const struct training *t = &s->train;
    bool blocks =
        t->recompute == RC_FULL || (t->recompute == RC_SELECTIVE && t->selective == SEL_BLOCKS);
    int len = snprintf(buf, n, "%s", recompute_name(t->recompute));

    if (t->recompute == RC_SELECTIVE && t->selective == SEL_TORCHTITAN_OP)
        snprintf(buf + len, n - (size_t)len, " (torchtitan op save list)");
    else if (blocks && t->recompute_every > 0)
        snprintf(buf + len, n - (size_t)len, " (every block of index %% %d == 0)",
                 t->recompute_every);
    else if (blocks && t->recompute_fraction < 1)
        snprintf(buf + len, n - (size_t)len, " (%.3g of the blocks)", t->recompute_fraction);
    else if (t->recompute == RC_SELECTIVE && t->selective == SEL_BLOCKS)
        snprintf(buf + len, n - (size_t)len, " (every block)");
}

static void config_section(FILE *f, const struct scenario *s)
{
    const struct model *m = &s->model;
    const struct parallelism *p = &s->par;
    char params[32], tokens[32], rc[64];
    int micro = s->train.global_batch / (s->train.micro_batch * p->dp);

    fmt_count(workload_params_total(m), params, sizeof(params));
    fmt_count((double)s->train.global_batch * s->train.seq_len, tokens, sizeof(tokens));
    fprintf(f, "  model      %s: %d layers, hidden %d, %d heads", m->name, m->layers, m->hidden,
            m->heads);
    if (m->kv_heads != m->heads)
        fprintf(f, " (%d kv)", m->kv_heads);
    if (m->moe.experts > 0)
        fprintf(f, ", %d experts top-%d", m->moe.experts, m->moe.topk);
    fprintf(f, ", %s parameters\n", params);
    fprintf(f, "  hardware   %s: ", s->hw.name);
    if (s->gpus == s->nodes * s->hw.gpus_per_node && s->gpus > 1)
        fprintf(f, "%d node%s x %d GPUs = %d GPUs", s->nodes, s->nodes == 1 ? "" : "s",
                s->hw.gpus_per_node, s->gpus);
    else /* part of one node */
        fprintf(f, "%d GPU%s of one %d-GPU node", s->gpus, s->gpus == 1 ? "" : "s",
                s->hw.gpus_per_node);
    fprintf(f, " (%s, %.0f TFLOP/s %s)\n", s->hw.gpu.model,
            cost_peak_flops(&s->hw.gpu, s->train.precision) / 1e12, dtype_name(s->train.precision));
    fprintf(f,
            "  training   seq %d, global batch %d (%s tokens), micro-batch %d, %d micro-batch%s\n",
            s->train.seq_len, s->train.global_batch, tokens, s->train.micro_batch, micro,
            micro == 1 ? "" : "es");
    recompute_text(s, rc, sizeof(rc));
    fprintf(f, "             %s%s, %s, recompute %s, %s attention, %s\n",
            dtype_name(s->train.precision), s->train.master_weights ? " + fp32 master" : "",
            optimizer_name(s->train.optimizer), rc,
            s->train.attention == ATTN_FLASH ? "flash" : "standard",
            s->train.finetune == FT_FULL ? "full fine-tuning" : finetune_name(s->train.finetune));
    fprintf(f, "  layout     dp %d x tp %d x pp %d", p->dp, p->tp, p->pp);
    if (p->cp > 1)
        fprintf(f, " x cp %d", p->cp);
    if (p->ep > 1)
        fprintf(f, ", ep %d", p->ep);
    if (p->pp > 1)
        fprintf(f, ", %s schedule", schedule_name(p->schedule));
    if (p->vpp > 1)
        fprintf(f, " (vpp %d)", p->vpp);
    if (p->sequence_parallel)
        fprintf(f, ", sequence parallel");
    fprintf(f, ", sharding %s\n", sharding_name(p->sharding));
    if (layout_sharding_reading(s))
        fprintf(f, "             sharding: %s\n", layout_sharding_reading(s));
    framework_line(f, s);
}

/* The step time's interval from the validation residuals of its regime (band.h). */
static void interval_line(FILE *f, const struct run *r)
{
    struct band b;
    char range[64], basis[320];

    band_lookup(r->s, r->step_s, &b);
    band_fmt(&b, range, sizeof(range));
    band_basis_text(&b, basis, sizeof(basis));
    if (b.found)
        fprintf(f,
                "  interval    %s   8 in 10 measured runs like it, scaled to this prediction\n"
                "              %s\n",
                range, basis);
    else
        fprintf(f, "  interval    none, %s\n", basis);
}

static void time_section(FILE *f, const struct run *r)
{
    static const int order[] = { TC_FWD,     TC_BWD,     TC_RECOMPUTE, TC_OPTIMIZER,
                                 TC_COMM_TP, TC_COMM_CP, TC_COMM_EP,   TC_COMM_PP,
                                 TC_COMM_DP, TC_OFFLOAD, TC_HOST,      TC_IDLE };
    static const char *const label[TC_COUNT] = {
        [TC_FWD] = "forward compute",         [TC_BWD] = "backward compute",
        [TC_RECOMPUTE] = "recompute",         [TC_OPTIMIZER] = "optimizer step",
        [TC_COMM_TP] = "exposed TP comm",     [TC_COMM_CP] = "exposed CP comm",
        [TC_COMM_EP] = "exposed EP comm",     [TC_COMM_PP] = "exposed PP comm",
        [TC_COMM_DP] = "exposed DP comm",     [TC_OFFLOAD] = "offload (PCIe, CPU)",
        [TC_HOST] = "host-bound (CPU issue)", [TC_IDLE] = "idle",
    };
    const double *bd = run_metrics(r)->breakdown_s;
    double total = 0;
    char buf[32];
    size_t i;

    for (i = 0; i < TC_COUNT; i++)
        total += bd[i];
    report_fmt_time(r->step_s, buf, sizeof(buf));
    fprintf(f, "\nStep time  %s", buf);
    if (r->sim.nranks > 1)
        fprintf(f, "   (breakdown averaged over %d simulated ranks)", r->sim.nranks);
    fprintf(f, "\n");
    for (i = 0; i < ARRAY_LEN(order); i++) {
        int c = order[i];
        const char *name = label[c];
        if (bd[c] <= 0 && c != TC_FWD && c != TC_BWD)
            continue;
        if (c == TC_IDLE && r->s->par.pp > 1)
            name = "idle (pipeline bubble)";
        report_fmt_time(bd[c], buf, sizeof(buf));
        fprintf(f, "  %-24s %10s  %5.1f %%\n", name, buf, total > 0 ? 100 * bd[c] / total : 0);
    }
    interval_line(f, r);
}

/* How MFU counts (workload_flops_convention()), one clause a line. */
static void flops_convention(FILE *f, const struct scenario *s)
{
    const char *c = workload_flops_convention(s), *semi;

    fprintf(f, "  FLOPs    ");
    while ((semi = strstr(c, "; ")) != NULL) {
        fprintf(f, "%.*s;\n           ", (int)(semi - c), c);
        c = semi + 2;
    }
    fprintf(f, "%s\n", c);
}

static void throughput_section(FILE *f, const struct run *r)
{
    char tps[32], tpg[32];

    fmt_count(r->tokens_per_s, tps, sizeof(tps));
    snprintf(tpg, sizeof(tpg), "%.0f", r->tokens_per_s_per_gpu);
    fprintf(f,
            "\nThroughput  %s tokens/s   %s tokens/s per GPU   MFU %.1f %%   HFU %.1f %% (with "
            "recomputation)\n",
            tps, tpg, 100 * r->mfu, 100 * r->hfu);
    flops_convention(f, r->s);
}

/* Time to train `training.tokens`, its cost and energy (totals.h). */
static void totals_section(FILE *f, const struct run *r)
{
    const struct train_totals *t = &run_metrics(r)->totals;
    char tok[32], cost[32], energy[32];

    if (!t->have_tokens)
        return;
    fmt_count(t->tokens, tok, sizeof(tok));
    fprintf(f, "\nTime to train  %s tokens: %.0f steps, ", tok, ceil(t->steps));
    if (t->seconds >= 2 * 86400.0)
        fprintf(f, "%.1f days", t->seconds / 86400.0);
    else
        fprintf(f, "%.1f hours", t->seconds / 3600.0);
    fprintf(f, " on %d GPU%s, %.0f GPU-hours\n", r->s->gpus, r->s->gpus == 1 ? "" : "s",
            t->gpu_hours);
    if (t->have_price) {
        totals_fmt_cost(t, cost, sizeof(cost));
        fprintf(f, "  cost     %s at $%.2f per GPU-hour\n", cost, r->s->train.price_gpu_hour);
    }
    if (t->have_power) {
        totals_fmt_energy(t, energy, sizeof(energy));
        fprintf(f,
                "  energy   %s at %.0f W per GPU (GPU boards only: not hosts, network, "
                "cooling)\n",
                energy, r->s->hw.gpu.power_W);
    }
}

static void comm_section(FILE *f, const struct run *r)
{
    const struct sim_result *sr = &r->sim;
    const double *busy = run_metrics(r)->busy_s;
    int i, c, shown = 0;

    if (sr->nnotes == 0)
        return;
    fprintf(f, "\nCommunication (per rank; total time, of which exposed above)\n");
    for (c = TC_COMM_TP; c <= TC_COMM_DP; c++) {
        char buf[32];
        if (busy[c] <= 0)
            continue;
        report_fmt_time(busy[c], buf, sizeof(buf));
        fprintf(f, "  %-8s %10s in flight\n", tcat_name(c), buf);
    }
    for (i = 0; i < sr->nnotes && shown < 6; i++) {
        const struct coll_note *n = &sr->notes[i];
        char bytes[32], t[32], count[32];
        fmt_bytes(n->bytes, bytes, sizeof(bytes));
        report_fmt_time((double)n->time / NS_PER_S, t, sizeof(t));
        /* per GPU; a mean over the ranks taking part where the stages differ (sim.h) */
        snprintf(count, sizeof(count), n->per_rank > floor(n->per_rank) ? "%.1f" : "%.0f",
                 n->per_rank);
        fprintf(f, "  %-8s %-14s %9s over %d GPUs on %d node%s: %s/%s via %s, %s each (x%s)\n",
                comm_kind_name(n->comm_kind), coll_op_name((enum coll_op)n->op), bytes, n->nranks,
                n->nnodes, n->nnodes == 1 ? "" : "s",
                n->algo == ALGO_AUTO ? "p2p" : algo_name((enum coll_algo)n->algo),
                proto_name((enum coll_proto)n->proto), n->path ? n->path : "?", t, count);
        shown++;
    }
}

static void dp_section(FILE *f, const struct run *r)
{
    const struct metrics_dp *d = &run_metrics(r)->dp;
    char vol[32], psi[32], link[32], nic[32], t[32], h2d[32], d2h[32];
    int micro = r->s->train.global_batch / (r->s->train.micro_batch * r->s->par.dp);

    if (d->collectives <= 0 && d->h2d_bytes + d->d2h_bytes <= 0)
        return;
    fmt_bytes(d->volume_bytes, vol, sizeof(vol));
    fmt_bytes(d->psi_bytes, psi, sizeof(psi));
    fmt_bytes(d->link_bytes, link, sizeof(link));
    fmt_bytes(d->nic_bytes, nic, sizeof(nic));
    report_fmt_time(d->exposed_s, t, sizeof(t));
    fprintf(f, "\nData-parallel traffic per GPU per step (%s, %d micro-batch%s)\n",
            sharding_name(r->s->par.sharding), micro, micro == 1 ? "" : "es");
    if (d->collectives > 0) {
        fprintf(f,
                "  volume    %10s = %.2f Psi (Psi = %s of 16-bit parameters; ZeRO §7: DDP 2, "
                "ZeRO-3 3)\n",
                vol, d->psi_bytes > 0 ? d->volume_bytes / d->psi_bytes : 0, psi);
        fprintf(f, "  on links  %10s, of which over NICs %s; exposed %s\n", link, nic, t);
    }
    if (d->h2d_bytes + d->d2h_bytes > 0) {
        fmt_bytes(d->h2d_bytes, h2d, sizeof(h2d));
        fmt_bytes(d->d2h_bytes, d2h, sizeof(d2h));
        report_fmt_time(d->offload_s, t, sizeof(t));
        fprintf(f, "  offload   PCIe %s to GPU, %s to host; exposed (with CPU optimizer) %s\n", h2d,
                d2h, t);
    }
}

static void memory_section(FILE *f, const struct run *r)
{
    const struct rank_result *rr = &r->sim.ranks[r->peak_idx];
    char peak[32], cap[32], head[32], buf[32], t[32];
    int c;

    fmt_bytes(r->peak_bytes, peak, sizeof(peak));
    fmt_bytes(r->capacity_bytes, cap, sizeof(cap));
    fmt_bytes(fabs(r->capacity_bytes - r->peak_bytes), head, sizeof(head));
    report_fmt_time((double)rr->peak_t / NS_PER_S, t, sizeof(t));
    fprintf(f, "\nMemory per GPU  peak %s of %s", peak, cap);
    if (r->sim.nranks > 1)
        fprintf(f, " (rank %d, stage %d, at %s)", rr->rank, rr->coords[DIM_PP], t);
    if (r->fits)
        fprintf(f, "  -> fits, %s free\n", head);
    else
        fprintf(f, "  -> OUT OF MEMORY by %s\n", head);
    report_reserve_note(f, r);
    for (c = 0; c < MC_COUNT; c++) {
        if (rr->at_peak[c] == 0)
            continue;
        fmt_bytes((double)rr->at_peak[c], buf, sizeof(buf));
        fprintf(f, "  %-20s %10s  %5.1f %%\n", mcat_name(c), buf,
                100.0 * (double)rr->at_peak[c] / r->peak_bytes);
    }
    {
        char a[32], rs[32];

        fmt_bytes(r->peak_allocated_bytes, a, sizeof(a));
        fmt_bytes(r->peak_reserved_bytes, rs, sizeof(rs));
        fprintf(f,
                "  as PyTorch counts it: allocated peak %s, reserved peak %s (max_memory_allocated "
                "/ max_memory_reserved: no context or NCCL)\n",
                a, rs);
    }
}

void report_reserve_note(FILE *f, const struct run *r)
{
    char buf[32];

    if (!r->fits || !(r->reserve_short_bytes > 0))
        return;
    fmt_bytes(r->reserve_short_bytes, buf, sizeof(buf));
    fprintf(f,
            "  note: tight: the allocator's usual reserve (training.memory_fragmentation) is %s\n"
            "        more than the GPU has free. PyTorch releases its cached blocks and retries a\n"
            "        failed cudaMalloc, but a fragmented pool can still run out of memory: leave\n"
            "        headroom, or try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.\n",
            buf);
}

static void stage_section(FILE *f, const struct run *r)
{
    int i;

    if (r->s->par.pp <= 1 || r->sim.nranks > 64)
        return;
    fprintf(f, "\nPer stage   compute   exposed comm   idle    peak memory\n");
    for (i = 0; i < r->sim.nranks; i++) {
        const struct rank_result *rr = &r->sim.ranks[i];
        double tot = (double)r->sim.step, comp, comm = 0;
        char mem[32];
        int c;
        comp = (double)(rr->bucket[TC_FWD] + rr->bucket[TC_BWD] + rr->bucket[TC_RECOMPUTE] +
                        rr->bucket[TC_OPTIMIZER]);
        for (c = TC_COMM_TP; c <= TC_OFFLOAD; c++)
            comm += (double)rr->bucket[c];
        fmt_bytes((double)rr->peak, mem, sizeof(mem));
        fprintf(f, "  stage %-3d  %5.1f %%   %8.1f %%   %5.1f %%   %s\n", rr->coords[DIM_PP],
                100 * comp / tot, 100 * comm / tot, 100 * (double)rr->bucket[TC_IDLE] / tot, mem);
    }
}

void report_text(FILE *f, const struct run *r)
{
    const struct scenario *s = r->s;

    fprintf(f, "simtrain %s: %s\n", SIMTRAIN_VERSION_STRING, s->path ? s->path : s->name);
    config_section(f, s);
    time_section(f, r);
    throughput_section(f, r);
    totals_section(f, r);
    comm_section(f, r);
    dp_section(f, r);
    memory_section(f, r);
    stage_section(f, r);
}

/*
 * workload_host.c - the CPU time that issues a layer's work (per part and pass) and the
 * optimizer's launches.
 *
 * A PyTorch job issues every kernel and collective from one host thread, asynchronously: as
 * long as the host is ahead, its cost hides behind the GPU; when a layer takes less GPU time
 * than the host needs to issue it (small models, thin layers, fast GPUs), the GPU waits. This
 * file computes the host's time per layer part and pass (struct host_cfg's cost per operation
 * class times the part's operations); strategy/layer.c puts it on the rank's host stream ahead
 * of the layer's kernels and the engine lets the two overlap (docs/host.md). What the host
 * spends, per kernel, per collective call and per FSDP unit (the defaults; profiles add the
 * framework's autograd, Python, RNG-fork and checkpoint costs):
 *
 *   eager PyTorch, per kernel   host.kernel_launch (default 4 us: the PyTorch eager
 *                               per-op overhead on CUDA, pytorch/pytorch #82793, a dispatch-
 *                               bound A100 run; a bare cuLaunchKernel is 3.0 us,
 *                               meta-pytorch/tritonbench PR #1017)
 *   torch.compile, per kernel   6.8 us (Inductor's CachingAutotuner.run: preamble 2.1 +
 *                               binder 1.7 + cuLaunchKernel 3.0, tritonbench PR #1017), with
 *                               the memory-bound kernels of a block fused two by two
 *                               (training.compile; an estimate: Inductor fuses a norm with
 *                               its residual, an activation with its neighbours), plus one
 *                               compiled-region call per part and direction, 44 us (guards,
 *                               device guard and launch, same table)
 *   a collective call           host.collective_enqueue, 32 us (ProcessGroupNCCL's
 *                               enqueue: 35 us with the current stream, 70 us without, for one
 * all-reduce, pytorch/pytorch PR #147820, measured on ROCm: the order of magnitude only) an FSDP1
 * unit               per parameter tensor 10.7 us to unshard, 6.9 us to reshard, 2.7 us of
 * write-back (use_orig_params=True, 400 parameters in 4.27 / 2.75 / 1.07 ms: pytorch/pytorch PR
 * #96958), each forward and again in backward the optimizer step          training.optimizer_impl
 * (workload_optimizer_time()): a fused step is one kernel per group of tensors; foreach launches
 *                               each op per group of up to 48 tensors (multi_tensor_apply's
 *                               depth-4 list); a Python loop launches 9 kernels per
 *                               parameter tensor (memory.c lists them), and with a device
 *                               step counter one more plus a `.item()` read before each
 *                               tensor's update: the host waits for the GPU there, counted as
 *                               2 x host_kernel (an estimate: a D2H copy and a stream sync)
 */
#include "model/workload.h"

#include <math.h>

#include "model/cost.h"

#define INDUCTOR_KERNEL_NS 6800  /* tritonbench PR #1017: CachingAutotuner.run, 0 args */
#define INDUCTOR_REGION_NS 44300 /* the same table: one compiled-graph call */
#define FSDP_UNSHARD_NS    10700 /* per parameter tensor (PR #96958: 4.268 ms / 400) */
#define FSDP_RESHARD_NS    6900  /* ~2.75 ms / 400 */
#define FSDP_WRITEBACK_NS  2700  /* 1.071 ms / 400 */

/* Kernels an operator launches: forward, backward (memory-bound ones counted apart). */
static void kernels_of(const struct scenario *s, const struct op *o, bool bwd, int *gemm, int *mem)
{
    switch (o->kind) {
    case OP_GEMM:
        if (!bwd) {
            *gemm += 1;
        } else {
            *gemm += (o->t_dgrad > 0) + (o->t_wgrad > 0);
            *mem += s->model.bias && o->t_wgrad > 0 && !o->bias_in_cast &&
                    s->train.finetune == FT_FULL && o->seg != SEG_CORE;
        }
        *mem += bwd ? o->extra_kernels_bwd : o->extra_kernels_fwd;
        break;
    case OP_ATTN:
        /* FA2 backward: preprocess, main, dq conversion; Triton: its four extra passes */
        *gemm += 1;
        *mem += bwd ? (s->train.attention_impl == ATTN_IMPL_TRITON ? 4 : 2) : 0;
        break;
    default:
        /* a norm's backward is two kernels (input gradient, weight gradient); an element-wise
         * chain run op by op (wl_chain()) launches its extra kernels too */
        if (!bwd)
            *mem += 1 + o->extra_kernels_fwd;
        else if (o->t_dgrad > 0)
            *mem += (o->seg == SEG_PRE && !o->extra_kernels_bwd ? 2 : 1) + o->extra_kernels_bwd;
        break;
    }
}

/* Weight matrices of one layer part (Hugging Face code keeps q, k, v apart). */
static int part_matrices(const struct scenario *s, int part)
{
    return part == PART_ATTN ? (scenario_model_code(s) == CODE_HF ? 4 : 2)
                             : (s->model.act == ACT_SWIGLU ? 3 : 2);
}

/* Parameter tensors of one layer part, as FSDP1's use_orig_params sees them. */
static int param_tensors(const struct scenario *s, int part)
{
    const struct model *m = &s->model;

    return (m->norm == NORM_LAYERNORM ? 2 : 1) + part_matrices(s, part) * (m->bias ? 2 : 1);
}

/* Collectives a part issues: tensor parallel (two with sequence parallelism), expert a2a. */
static int coll_calls(const struct scenario *s, int part, bool bwd)
{
    const struct parallelism *p = &s->par;
    int n = 0;

    if (p->tp > 1)
        n += p->sequence_parallel ? (bwd ? 3 : 2) : 1;
    if (part == PART_MLP && p->ep > 1 && s->model.moe.experts > 0)
        n += 2;
    if (part == PART_ATTN && p->cp > 1)
        n += p->cp;
    return n;
}

static bool fsdp1(const struct scenario *s)
{
    enum sharding sh = s->par.sharding;

    return s->fsdp.version <= 1 &&
           (sh == SHARD_FSDP || sh == SHARD_FSDP_GRAD_OP || sh == SHARD_HSDP);
}

/*
 * Python-level operations without a kernel of their own per layer part, forward and backward:
 * tensor views, transposes, splits, the module calls and the autograd Functions written in
 * Python (Megatron's mappings around the TP collectives, the fused softmax, bias-GeLU and
 * bias-dropout-add wrappers) whose backward runs Python again. Counted in Megatron-LM
 * megatron/model/transformer.py (ParallelAttention.forward, ParallelMLP.forward,
 * ParallelTransformerLayer.forward; the pre-Core modules Megatron-DeepSpeed keeps) and, for
 * the other model codes, in transformers' modeling_llama.py / LitGPT's model.py: an estimate
 * of the relative weight of the parts; the cost per op is the profile's (host.python_op).
 */
static int python_ops(const struct scenario *s, const struct layer_cost *lc, int part, bool bwd)
{
    bool megatron = scenario_model_code(s) == CODE_MEGATRON;
    /*
     * Megatron's softmax on its PyTorch path (lc->softmax_torch, workload_layer.c): five eager
     * calls from Python replace the fused kernel's autograd Function forward (+4), and
     * autograd's C++ nodes replace that Function's Python backward (-1)
     */
    int torch_softmax = part == PART_ATTN && megatron && lc->softmax_torch ? (bwd ? -1 : 4) : 0;

    if (bwd)
        return (part == PART_ATTN ? (megatron ? 4 : 2) : (megatron ? 2 : 1)) + torch_softmax;
    return (part == PART_ATTN ? (megatron ? 16 : 12) : (megatron ? 6 : 4)) + torch_softmax;
}

/* Operators of one part: each is one autograd node (a Function created forward, run backward). */
static int autograd_nodes(const struct layer_cost *lc, int part)
{
    int n = 0;

    for (int i = 0; i < lc->nops; i++)
        n += lc->ops[i].part == part;
    return n;
}

sim_time workload_host_time(const struct scenario *s, const struct layer_cost *lc, int part,
                            int pass)
{
    const struct host_cfg *h = &s->host;
    bool bwd = pass == HOST_BWD, ckpt = pass == HOST_FWD_CKPT || pass == HOST_RECOMPUTE;
    double k = (double)h->kernel_launch, t = 0;
    int gemm = 0, mem = 0, i, n;

    for (i = 0; i < lc->nops; i++)
        if (lc->ops[i].part == part)
            kernels_of(s, &lc->ops[i], bwd, &gemm, &mem);
    if (s->train.compile)
        t = gemm * (double)INDUCTOR_KERNEL_NS + ceil(mem / 2.0) * INDUCTOR_KERNEL_NS +
            INDUCTOR_REGION_NS;
    else
        t = (gemm + mem) * k + python_ops(s, lc, part, bwd) * (double)h->python_op;
    /* the forward of a checkpointed layer runs under no_grad: no autograd nodes */
    if (pass != HOST_FWD_CKPT && !s->train.compile)
        t += autograd_nodes(lc, part) * (double)h->autograd_node;
    /* Megatron forks the TP RNG tracker around the attention dropout, whatever tp */
    if (part == PART_ATTN && !bwd && s->model.dropout && scenario_model_code(s) == CODE_MEGATRON)
        t += (double)h->rng_fork;
    if (part == PART_ATTN && ckpt) /* the checkpoint function: entered, then re-entered */
        t += (double)h->checkpoint_region;
    t += coll_calls(s, part, bwd) * (double)h->collective_enqueue;
    /* FSDP1 unit = the layer: its bookkeeping on the part that starts it in each direction */
    if (fsdp1(s) && part == (bwd ? PART_MLP : PART_ATTN)) {
        n = param_tensors(s, PART_ATTN) + param_tensors(s, PART_MLP);
        t += n * (double)(FSDP_UNSHARD_NS + FSDP_RESHARD_NS + (bwd ? FSDP_WRITEBACK_NS : 0));
        t += (bwd ? 2 : 1) * (double)h->collective_enqueue;
    }
    return (sim_time)ceil(t);
}

void workload_host_times(const struct scenario *s, struct layer_cost *lc)
{
    for (int part = 0; part < PART_COUNT; part++)
        for (int pass = 0; pass < HOST_PASSES; pass++)
            lc->host[pass][part] = workload_host_time(s, lc, part, pass);
}

/*
 * The parts outside the layers, per micro-batch, counted in Megatron-DeepSpeed's pre-Core code
 * (Megatron-LM v2.5 has the same functions): kernels, Python-level ops, collective calls.
 *
 *   embedding forward   pretrain_gpt.py get_batch(): broadcast_data() (two broadcasts, the
 *                       sizes' H2D copy, the flattening cat, the split), tokens/labels slices
 *                       (.long(), 2 x contiguous), get_ltor_masks_and_position_ids() (tril of
 *                       ones, loss-mask ones and its eod masked fill, arange, `< 0.5`): 11
 *                       kernels, 10 ops; engine.forward, Float16Module, GPTModel,
 *                       TransformerLanguageModel and Embedding calls (5 ops); word and
 *                       position lookups, their sum, the [s, b] transpose copy, the dropout
 *                       (5 kernels, 3 ops); at tp > 1 VocabParallelEmbedding's range mask
 *                       (3), clone - start (2), masked_input and output masking (2) and its
 *                       reduce mapping (1 op, 1 all-reduce)
 *   embedding backward  dropout, transpose copy, two embedding_dense_backward (sort and
 *                       segment sums, 4 each): 10 kernels; at tp > 1 the mask's (1)
 *   head forward        final LayerNorm and parallel_lm_logits (copy mapping, F.linear: 2
 *                       kernels, 3 ops); output.float() (1); _VocabParallelCrossEntropy
 *                       (max, sub_, target mask 3, clone - start 2, masked fill, arange,
 *                       gather, clone, masked fill, exp, sum, log - predicted 2, div_: 17
 *                       kernels, 10 ops, three all-reduces, whatever tp); loss_func (float,
 *                       view.float, mul, sum, sum, div, cat, div: 8 kernels, 6 ops, the
 *                       data-parallel loss average all-reduce); engine.backward's loss scaling
 *                       (gas div, fp16 float * scale: 3 kernels, 4 ops)
 *   head backward       scaling and loss_func backward (5), the cross-entropy's Python
 *                       backward (softmax update 2, arange, gather, sub, index_put, mul_: 7
 *                       kernels, 6 ops), the cast (1), the GEMM's two, the norm's two; the
 *                       copy mapping's backward (1 op)
 * The backward collectives of the mappings are the edges' TP collectives (strategy/build.c);
 * only their enqueue is counted here, as in the layers (coll_calls()).
 */
void workload_edge_host(const struct scenario *s, struct edge_cost *e, bool head)
{
    const struct host_cfg *h = &s->host;
    bool tp = s->par.tp > 1, sp = tp && s->par.sequence_parallel;
    double k = (double)h->kernel_launch, py = (double)h->python_op,
           c = (double)h->collective_enqueue;

    e->host_fwd = e->host_bwd = 0;
    if (scenario_model_code(s) != CODE_MEGATRON || s->train.compile)
        return;
    if (!head) {
        e->host_fwd = (sim_time)ceil((16 + 7 * tp) * k + (18 + tp) * py + (2 + tp) * c);
        e->host_bwd = (sim_time)ceil((10 + tp) * k + tp * py + sp * c);
        return;
    }
    e->host_fwd = (sim_time)ceil(31 * k + 23 * py + (4 + sp) * c);
    e->host_bwd = (sim_time)ceil(17 * k + 7 * py + tp * c);
}

#define OPT_LOOP_KERNELS 9  /* AdamW one op at a time: memory.c memory_optimizer_traffic() */
#define MTA_TENSORS      48 /* multi_tensor_apply.cuh depth_to_max_tensors[3] (4 lists) */

/*
 * Parameter tensors on one pipeline stage (its layers', and the embedding tensors), and how
 * many of them are weight matrices (the layers' and the embedding; biases and norms are small).
 */
static int stage_param_tensors(const struct scenario *s, int *matrices)
{
    const struct model *m = &s->model;
    int pp = s->par.pp > 0 ? s->par.pp : 1;
    int layers = (m->layers + pp - 1) / pp;

    *matrices = layers * (part_matrices(s, PART_ATTN) + part_matrices(s, PART_MLP)) + 1;
    return layers * (param_tensors(s, PART_ATTN) + param_tensors(s, PART_MLP)) + 2 +
           (m->pos == POS_LEARNED) + !m->tied_embeddings;
}

sim_time workload_optimizer_time(const struct scenario *s, double params, double bytes_per_param)
{
    const struct efficiency *e = &s->hw.eff;
    sim_time gpu = cost_membound(&s->hw.gpu, e, params * bytes_per_param);
    double hk = (double)e->host_kernel, n, mats, per_mat, t;
    int nmat;

    if (s->train.optimizer != OPT_ADAMW || s->train.optimizer_impl == OPT_IMPL_FUSED || gpu <= 0)
        return gpu;
    n = stage_param_tensors(s, &nmat);
    if (s->train.optimizer_impl == OPT_IMPL_FOREACH) {
        double launches = (OPT_LOOP_KERNELS + 1) * ceil(n / MTA_TENSORS);
        t = fmax((double)gpu + launches * (double)e->launch, launches * hk);
        return (sim_time)ceil(t);
    }
    /*
     * One tensor at a time: the weight matrices share the shard's bytes, the norms' and
     * biases' updates are launch-bound; each tensor takes the longer of its launches and its
     * kernels.
     */
    mats = nmat < n ? nmat : n;
    per_mat = ((double)gpu - (double)e->launch) / mats;
    t = mats * fmax(OPT_LOOP_KERNELS * hk, OPT_LOOP_KERNELS * (double)e->launch + per_mat) +
        (n - mats) * OPT_LOOP_KERNELS * fmax(hk, (double)e->launch);
    if (s->train.optimizer_impl == OPT_IMPL_FOR_LOOP_SYNC)
        t += n * 3 * hk; /* state['step'] += 1, then .item(): copy and sync */
    return (sim_time)ceil(t);
}

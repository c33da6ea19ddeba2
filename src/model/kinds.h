/*
 * kinds.h - the vocabulary every stage shares: communicator kinds (which group of ranks a
 * collective runs on), time categories (where a rank's time goes) and memory categories
 * (what every byte on a GPU is). The layout resolves communicator kinds to ranks (layout.h),
 * the memory model counts bytes by category (memory.h), programs tag their tasks with all
 * three (prog.h), and the engine and the report account by them. Their names for reports
 * are tcat_name(), mcat_name(), mmod_name() and comm_kind_name() (prog.h). Memory marks also
 * name the model module (embedding, attention, MLP, ...) their tensors belong to.
 */
#ifndef SIMTRAIN_KINDS_H
#define SIMTRAIN_KINDS_H

/* Communicator kinds, resolved per rank to a concrete group by the layout. */
enum comm_kind {
    COMM_TP,
    COMM_CP,
    COMM_EP,
    COMM_DP,       /* all data-parallel replicas (dp * cp for gradients when cp > 1) */
    COMM_DP_INTRA, /* HSDP shard group: DP peers inside a node */
    COMM_DP_INTER, /* HSDP replicate group: same shard index across nodes */
    COMM_EDP,      /* expert data parallel: DP peers holding the same experts */
    COMM_PP_NEXT,  /* point-to-point with the next stage (activations flow forward) */
    COMM_PP_PREV,  /* point-to-point with the previous stage (gradients flow back) */
    COMM_KIND_COUNT
};

/* Where time goes, for the breakdown and the trace. */
enum time_cat {
    TC_FWD,
    TC_BWD,
    TC_RECOMPUTE,
    TC_OPTIMIZER,
    TC_COMM_TP,
    TC_COMM_CP,
    TC_COMM_EP,
    TC_COMM_PP,
    TC_COMM_DP,
    TC_OFFLOAD, /* PCIe transfers and host optimizer work of CPU offload */
    TC_HOST,    /* the framework's CPU issuing work: the GPU waits for it (host-bound) */
    TC_IDLE,    /* nothing running: pipeline bubble, waiting for peers */
    TC_COUNT
};

/* Memory categories; every byte on a GPU is attributed to one. */
enum mem_cat {
    MC_PARAMS,    /* parameters as stored (bf16, fp32, NF4 + constants) */
    MC_MASTER,    /* fp32 master weights (mixed precision) */
    MC_GRADS,     /* gradients (accumulation buffers) */
    MC_OPTIM,     /* optimizer states */
    MC_ACT,       /* activations saved for backward */
    MC_LOGITS,    /* logits and loss buffers */
    MC_GATHERED,  /* unsharded parameters alive under ZeRO-3 / FSDP */
    MC_COMM,      /* communication buffers: DDP buckets, gather/scatter staging */
    MC_WORKSPACE, /* transient op outputs, cuBLAS workspace */
    MC_OVERHEAD,  /* CUDA context, NCCL (estimate) */
    MC_RESERVE,   /* caching-allocator reserve: fragmentation of the step's churn (estimate) */
    MC_COUNT
};

/*
 * Modules of the model, for the per-module view of the peak: the tensors a module saves for
 * backward (activations, logits) carry it on their memory marks (prog_mem_modules()); model
 * states and buffers are not split by module.
 */
enum mem_module {
    MM_EMBED, /* token (and position) embedding */
    MM_ATTN,  /* attention: projections, rope, core, residual */
    MM_MLP,   /* MLP or MoE block, with its backward temporaries */
    MM_NORM,  /* the norms before attention and MLP, and the final norm */
    MM_HEAD,  /* LM head and loss, logits included */
    MM_CKPT,  /* layer inputs kept by full recompute (checkpoints) */
    MM_COUNT
};

#endif

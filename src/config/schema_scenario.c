/*
 * schema_scenario.c - the key tables of the scenario file (schema.h, schema_scenario): the
 * cluster, training (with its LoRA adapters), parallelism, the DDP, ZeRO, FSDP and NCCL knobs
 * and the simulation settings, and the enumeration words only they use. The hardware and
 * workload a scenario names are described in schema.c, the row macros in schema_internal.h.
 *
 * Defaults carry their source next to them.
 */
#include "config/schema_internal.h"

#include <stddef.h>

/* ---- enumerations (the spellings of names.c) ---------------------------------------- */

static const struct enum_name precision_names[] = {
    { "bf16", DT_BF16 }, { "fp16", DT_FP16 }, { "fp8", DT_FP8 }, { "fp32", DT_FP32 }, { NULL, 0 },
};
static const struct enum_name grad_dtype_names[] = {
    { "fp32", DT_FP32 },
    { "bf16", DT_BF16 },
    { "fp16", DT_FP16 },
    { NULL, 0 },
};
static const struct enum_name optimizer_names[] = {
    { "adamw", OPT_ADAMW },
    { "adam8bit", OPT_ADAM8BIT },
    { "sgd", OPT_SGD },
    { "adafactor", OPT_ADAFACTOR },
    { "torchao_adamw8bit", OPT_TORCHAO_ADAMW8BIT },
    { "torchao_adamw4bit", OPT_TORCHAO_ADAMW4BIT },
    { "torchao_adamwfp8", OPT_TORCHAO_ADAMWFP8 },
    { NULL, 0 },
};
static const struct enum_name optimizer_impl_names[] = {
    { "fused", OPT_IMPL_FUSED },
    { "foreach", OPT_IMPL_FOREACH },
    { "for_loop", OPT_IMPL_FOR_LOOP },
    { "for_loop_sync", OPT_IMPL_FOR_LOOP_SYNC },
    { NULL, 0 },
};
static const struct enum_name recompute_names[] = {
    { "none", RC_NONE },
    { "selective", RC_SELECTIVE },
    { "full", RC_FULL },
    { NULL, 0 },
};
static const struct enum_name selective_names[] = {
    { "attention_core", SEL_ATTN_CORE },
    { "torchtitan_op", SEL_TORCHTITAN_OP },
    { "blocks", SEL_BLOCKS },
    { NULL, 0 },
};
static const struct enum_name pp_split_names[] = {
    { "auto", SPLIT_AUTO },
    { "even", SPLIT_EVEN },
    { "megatron", SPLIT_MEGATRON },
    { "torchtitan", SPLIT_TORCHTITAN },
    { "torchtitan_weighted", SPLIT_TORCHTITAN_W },
    { "megatron_embedding", SPLIT_MEGATRON_EMB },
    { "megatron_loss", SPLIT_MEGATRON_LOSS },
    { NULL, 0 },
};
static const struct enum_name cp_method_names[] = {
    { "p2p", CP_P2P },
    { "allgather", CP_ALLGATHER },
    { "alltoall", CP_ALLTOALL },
    { NULL, 0 },
};
static const struct enum_name attention_names[] = {
    { "flash", ATTN_FLASH },
    { "standard", ATTN_STANDARD },
    { NULL, 0 },
};
static const struct enum_name attention_impl_names[] = {
    { "cuda", ATTN_IMPL_CUDA },
    { "triton", ATTN_IMPL_TRITON },
    { "fa3", ATTN_IMPL_FA3 },
    { "cudnn", ATTN_IMPL_CUDNN },
    { NULL, 0 },
};
static const struct enum_name fp8_recipe_names[] = {
    { "none", FP8_NONE },
    { "te_delayed", FP8_TE_DELAYED },
    { "te_current", FP8_TE_CURRENT },
    { "torchao_tensorwise", FP8_TORCHAO_TENSORWISE },
    { "torchao_rowwise", FP8_TORCHAO_ROWWISE },
    { NULL, 0 },
};
static const struct enum_name model_code_names[] = {
    { "auto", CODE_AUTO }, { "megatron", CODE_MEGATRON },
    { "hf", CODE_HF },     { "litgpt", CODE_LITGPT },
    { NULL, 0 },
};
static const struct enum_name rmsnorm_impl_names[] = {
    { "python", RMSNORM_PYTHON },
    { "fused", RMSNORM_FUSED },
    { NULL, 0 },
};
static const struct enum_name cross_entropy_names[] = {
    { "fp32", CE_FP32 },
    { "fused", CE_FUSED },
    { NULL, 0 },
};
static const struct enum_name finetune_names[] = {
    { "full", FT_FULL },           { "lora", FT_LORA }, { "qlora", FT_QLORA },
    { "lora_int8", FT_LORA_INT8 }, { NULL, 0 },
};
static const struct enum_name lora_target_names[] = {
    { "q", LORA_Q },       { "k", LORA_K },   { "v", LORA_V },       { "o", LORA_O },
    { "gate", LORA_GATE }, { "up", LORA_UP }, { "down", LORA_DOWN }, { NULL, 0 },
};
static const struct enum_name offload_names[] = {
    { "none", OFFLOAD_NONE },
    { "optimizer", OFFLOAD_OPTIMIZER },
    { "params", OFFLOAD_PARAMS },
    { "params_only", OFFLOAD_PARAMS_ONLY },
    { NULL, 0 },
};
static const struct enum_name act_offload_names[] = {
    { "none", ACT_OFFLOAD_NONE },
    { "streams", ACT_OFFLOAD_STREAMS },
    { "sync", ACT_OFFLOAD_SYNC },
    { NULL, 0 },
};
static const struct enum_name lora_save_names[] = {
    { "embed", LORA_SAVE_EMBED },
    { "head", LORA_SAVE_HEAD },
    { NULL, 0 },
};
static const struct enum_name schedule_names[] = {
    { "1f1b", SCHED_1F1B },
    { "gpipe", SCHED_GPIPE },
    { "interleaved", SCHED_INTERLEAVED },
    { "zb-h1", SCHED_ZB_H1 },
    { NULL, 0 },
};
static const struct enum_name sharding_names[] = {
    { "none", SHARD_NONE },
    { "zero1", SHARD_ZERO1 },
    { "zero2", SHARD_ZERO2 },
    { "zero3", SHARD_ZERO3 },
    { "fsdp", SHARD_FSDP },
    { "fsdp_grad_op", SHARD_FSDP_GRAD_OP },
    { "hsdp", SHARD_HSDP },
    { "fsdp_no_shard", SHARD_FSDP_NO_SHARD },
    { NULL, 0 },
};
static const struct enum_name zero2_impl_names[] = {
    { "auto", Z2_AUTO },
    { "deepspeed", Z2_DEEPSPEED },
    { "fsdp", Z2_FSDP },
    { NULL, 0 },
};
static const struct enum_name framework_names[] = {
    { "auto", FW_AUTO },
    { "megatron", FW_MEGATRON },
    { "deepspeed", FW_DEEPSPEED },
    { "pytorch", FW_PYTORCH },
    { NULL, 0 },
};
static const struct enum_name ddp_impl_names[] = {
    { "auto", DDP_IMPL_AUTO },
    { "megatron", DDP_IMPL_MEGATRON },
    { "pytorch", DDP_IMPL_PYTORCH },
    { NULL, 0 },
};
static const struct enum_name zero3_gather_names[] = {
    { "coalesced", ZERO3_GATHER_COALESCED },
    { "per_param_sync", ZERO3_GATHER_PER_PARAM_SYNC },
    { NULL, 0 },
};
static const struct enum_name prefetch_names[] = {
    { "backward_pre", BWD_PREFETCH_PRE },
    { "backward_post", BWD_PREFETCH_POST },
    { "none", BWD_PREFETCH_NONE },
    { NULL, 0 },
};

/* ---- scenario ------------------------------------------------------------------------------ */

static const struct field cluster_rows[] = {
    { INT("nodes", struct scenario, nodes, 1, NULL), .given = GIVEN_NODES,
      .def_doc = "hardware `nodes`, or enough for `gpus`", .doc = "nodes in the job" },
    { INT("gpus", struct scenario, gpus, 1, NULL), .given = GIVEN_GPUS,
      .def_doc = "nodes * GPUs per node",
      .doc = "GPUs in the job; fewer than a node's only on one node" },
};
static const struct section cluster_section = SECTION("cluster", cluster_rows, 0);

static const struct field lora_rows[] = {
    /* Targets q, v as Hu et al. 2021 §4.1 (LoRA); rank 16 and alpha = 2 * rank are a common
     * fine-tuning convention, not a published default. */
    { INT("rank", struct lora_spec, rank, 1, "16"), .doc = "adapter rank r" },
    { NUM("alpha", struct lora_spec, alpha, 0, 0, "32"), .given = GIVEN_LORA_ALPHA,
      .def_doc = "2 * rank", .doc = "scaling numerator (alpha / r)" },
    { .key = "targets",
      .type = FT_FLAGS,
      AT(struct lora_spec, targets),
      .names = lora_target_names,
      .def = "[q, v]",
      .doc = "adapted projections" },
    { BOOL("double_quant", struct lora_spec, double_quant, "true"),
      .doc = "QLoRA double quantization of the NF4 constants" },
    { BOOL("paged_optimizer", struct lora_spec, paged_optimizer, "false"),
      .doc = "QLoRA paged optimizer" },
    /* PEFT LoraConfig.lora_dropout defaults to 0.0; LitGPT's finetune/lora.py uses 0.05. */
    { NUM("dropout", struct lora_spec, dropout, 0, 1, "0"), .flags = F_ZERO_OK,
      .doc = "lora_dropout probability (> 0 keeps a dropped copy of each adapted input)" },
    { .key = "modules_to_save",
      .type = FT_FLAGS,
      AT(struct lora_spec, modules_to_save),
      .names = lora_save_names,
      .def = "[]",
      .doc = "modules trained whole beside the adapters (PEFT modules_to_save)" },
    { BOOL("dora", struct lora_spec, dora, "false"),
      .doc = "DoRA: a trained magnitude per output row and the weight norm every forward" },
};
static const struct section lora_section = SECTION("training.lora", lora_rows, 0);

static const struct field training_rows[] = {
    { INT("seq_len", struct training, seq_len, 1, NULL), .flags = F_REQUIRED,
      .doc = "tokens per sequence" },
    { INT("global_batch", struct training, global_batch, 1, NULL), .flags = F_REQUIRED,
      .doc = "sequences per optimizer step" },
    { INT("micro_batch", struct training, micro_batch, 1, "1"),
      .doc = "sequences per micro-batch per model replica" },
    { ENUM("precision", struct training, precision, precision_names, "bf16"),
      .doc = "matmul and activation dtype" },
    { BOOL("master_weights", struct training, master_weights, "true"),
      .doc = "fp32 master copy of the weights" },
    { ENUM("grad_dtype", struct training, grad_dtype, grad_dtype_names, "fp32"),
      .doc = "gradient accumulation dtype" },
    { ENUM("optimizer", struct training, optimizer, optimizer_names, "adamw"), .doc = "optimizer" },
    { ENUM("optimizer_impl", struct training, optimizer_impl, optimizer_impl_names, "fused"),
      .doc = "AdamW step: fused (one pass), foreach (multi-tensor), for_loop (a kernel per op "
             "per parameter), for_loop_sync (plus a host sync per parameter)" },
    { ENUM("recompute", struct training, recompute, recompute_names, "none"),
      .doc = "activation recomputation" },
    { INT("recompute_layers", struct training, recompute_layers, 0, "0"),
      .doc = "full: checkpointed layers per stage, 0 = all" },
    { ENUM("attention", struct training, attention, attention_names, "flash"),
      .doc = "attention kernel" },
    { ENUM("attention_impl", struct training, attention_impl, attention_impl_names, "cuda"),
      .doc = "flash kernels: cuda (FlashAttention-2), triton (flash_attn_triton.py), fa3 (Hopper), "
             "cudnn" },
    { BOOL("attention_unpad", struct training, attention_unpad, "false"),
      .doc = "CUDA flash kernels on unpadded tokens: q, k, v gathered and the output scattered "
             "back around each call (flash_attn bert_padding; MPT's flash_attn_fn)" },
    { ENUM("cross_entropy", struct training, cross_entropy, cross_entropy_names, "fp32"),
      .doc = "loss on fp32-upcast logits, or fused on 16-bit logits" },
    /* Issue 15 (FP8 as it runs, torch.compile): the framework profiles set these per stack. */
    { ENUM("fp8_recipe", struct training, fp8_recipe, fp8_recipe_names, NULL),
      .given = GIVEN_FP8_RECIPE, .def_doc = "te_delayed for precision fp8, else none",
      .doc = "how FP8 linears cast: Transformer Engine delayed / current scaling, torchao" },
    { BOOL("fp8_filter_small", struct training, fp8_filter_small, "false"),
      .doc = "torchao auto_filter_small_kn: linears too small to gain stay BF16" },
    /* Issue 24: Megatron's --fp8-param-gather, NeMo / Megatron-Bridge fp8_param_gather. */
    { BOOL("fp8_params", struct training, fp8_params, "false"),
      .doc = "FP8 parameters (Transformer Engine, fp8_param_gather): projection weights kept as "
             "FP8 data + transpose, no 16-bit copy; gathered in FP8 after the step" },
    { BOOL("compile", struct training, compile, "false"),
      .doc = "torch.compile: element-wise chains (norms, RoPE, gated activations) and FP8 casts "
             "fused into single kernels, fewer kernel launches" },
    { ENUM("rmsnorm_impl", struct training, rmsnorm_impl, rmsnorm_impl_names, "python"),
      .doc = "eager code's RMSNorm without compile: python (its tensor ops, a kernel each) or "
             "fused (one kernel: torch >= 2.9 nn.RMSNorm)" },
    { ENUM("model_code", struct training, model_code, model_code_names, "auto"),
      .doc = "whose modules: auto, megatron (fused), hf (Transformers + PEFT), litgpt" },
    { ENUM("finetune", struct training, finetune, finetune_names, "full"),
      .doc = "full training or adapters" },
    { NUM("trainable_fraction", struct training, trainable_fraction, 0, 1, "1"),
      .doc = "finetune full: share of the parameters that train; the rest are frozen (no "
             "gradient, master copy or optimizer state, no weight-gradient GEMM)" },
    { SECT("lora", struct training, lora, lora_section), .doc = "LoRA / QLoRA adapters" },
    { ENUM("offload", struct training, offload, offload_names, "none"),
      .doc = "CPU offload (ZeRO-Offload / FSDP CPU offload)" },
    { BOOL("paged_optimizer", struct training, paged_optimizer, "false"),
      .doc = "optimizer states in paged memory (bitsandbytes paged_*), any finetune" },
    { ENUM("activation_offload", struct training, activation_offload, act_offload_names, "none"),
      .doc = "saved activations of each layer to host memory: streams or sync copies" },
    { QTY("tokens", struct training, tokens, UNIT_COUNT, NULL),
      .doc = "tokens to train, for time-to-train (optional)" },
    { NUM("price_per_gpu_hour", struct training, price_gpu_hour, 0, 0, NULL),
      .doc = "USD per GPU-hour, for cost (optional)" },
    /* Estimate: CUDA context 0.47-0.92 GiB plus ~1 GiB of NCCL and torch.distributed init
     * (ml-engineering "Additional GPU memory usage", formulas.md §2.10). */
    { QTY("memory_overhead", struct training, overhead_bytes, UNIT_BYTES, "1.5 GiB"),
      .flags = F_ZERO_OK, .doc = "CUDA context + NCCL per GPU" },
    /* Estimate: PyTorch's caching allocator leaves 15 % of its reserve unusable on average over
     * eight LLMs trained with recompute / LoRA / ZeRO / offload on A100 80GB (GMLake, Guo et
     * al., ASPLOS'24, arXiv:2401.08156, abstract: "15% (up to 33%)"); docs/memory.md. */
    { NUM("memory_fragmentation", struct training, fragmentation, 0, 0.9, "0.15"),
      .flags = F_ZERO_OK,
      .doc = "share of the allocator's reserve for the step's tensors that no request can use" },
    /* ---- framework profiles (frameworks/NAME.yaml, docs/frameworks.md) ---- */
    { STR("framework", struct training, framework), .def_doc = "other",
      .doc = "training software whose defaults apply: a profile in frameworks/ (simtrain "
             "frameworks)" },
    { STR("framework_version", struct training, framework_version),
      .def_doc = "the profile's current version", .doc = "release of that software" },
    { ENUM("selective_policy", struct training, selective, selective_names, "attention_core"),
      .doc = "what recompute selective recomputes: attention_core (Megatron), torchtitan_op "
             "(its per-op save list), blocks (whole blocks: recompute_every, recompute_fraction)" },
    { INT("recompute_every", struct training, recompute_every, 0, "0"), .flags = F_ZERO_OK,
      .doc = "whole-block recompute: only blocks whose 1-based index is a multiple of k "
             "(torchtitan's layer mode); 0 = every block" },
    { NUM("recompute_fraction", struct training, recompute_fraction, 0, 1, "1"),
      .doc = "whole-block recompute: this fraction of the blocks, evenly spaced (fms-fsdp)" },
};
static const struct section training_section = SECTION("training", training_rows, 0);

static const struct field parallelism_rows[] = {
    { INT("dp", struct parallelism, dp, 1, NULL), .given = GIVEN_DP,
      .def_doc = "GPUs / (tp * pp * cp)", .doc = "data-parallel degree" },
    { INT("tp", struct parallelism, tp, 1, "1"), .doc = "tensor-parallel degree" },
    { INT("pp", struct parallelism, pp, 1, "1"), .doc = "pipeline-parallel degree" },
    { INT("vpp", struct parallelism, vpp, 1, "1"), .doc = "model chunks per pipeline rank" },
    { INT("cp", struct parallelism, cp, 1, "1"), .doc = "context-parallel degree" },
    { INT("ep", struct parallelism, ep, 1, "1"), .doc = "expert-parallel degree, within dp" },
    { BOOL("sequence_parallel", struct parallelism, sequence_parallel, "false"),
      .doc = "Megatron sequence parallelism (needs tp > 1)" },
    { ENUM("schedule", struct parallelism, schedule, schedule_names, "1f1b"),
      .given = GIVEN_SCHEDULE, .def_doc = "1f1b; interleaved when vpp > 1",
      .doc = "pipeline schedule" },
    { ENUM("sharding", struct parallelism, sharding, sharding_names, "none"),
      .doc = "data-parallel sharding of model states" },
    /* ---- framework profiles: the stacks' words (docs/sharding.md) ---- */
    { ENUM("zero2_impl", struct parallelism, zero2_impl, zero2_impl_names, "auto"),
      .def_doc = "the profile's; without one, fsdp under pp > 1, else deepspeed",
      .doc = "what sharding zero2 means: deepspeed (ZeRO stage 2) or fsdp (FSDP without "
             "resharding after forward, run as fsdp_grad_op)" },
    { ENUM("framework", struct parallelism, framework, framework_names, "auto"),
      .doc = "whose implementation to model" },
    { .key = "order",
      .type = FT_ORDER,
      AT(struct parallelism, order),
      .def = "tp-cp-ep-dp-pp",
      .doc = "rank placement, innermost first" },
    { INT("first_stage_layers", struct parallelism, first_stage_layers, 0, "0"), .flags = F_ZERO_OK,
      .doc = "layers on the first pipeline stage; 0 = even split" },
    { INT("last_stage_layers", struct parallelism, last_stage_layers, 0, "0"), .flags = F_ZERO_OK,
      .doc = "layers on the last pipeline stage; 0 = even split" },
    /* ---- framework profiles: the stacks' pipeline splits (model/partition.c) ---- */
    { ENUM("pp_split", struct parallelism, pp_split, pp_split_names, "auto"),
      .doc = "layers over stages without first/last_stage_layers: auto (even, else embedding and "
             "loss as a layer each), even, megatron (embedding and loss as a layer each), "
             "megatron_embedding, megatron_loss (one of them), torchtitan, torchtitan_weighted" },
    /* ---- framework profiles: context-parallel attention (strategy/layer.c) ---- */
    { ENUM("cp_method", struct parallelism, cp_method, cp_method_names, "p2p"),
      .doc = "context-parallel attention: p2p (Transformer Engine's ring), allgather or alltoall "
             "(torchtitan's rotate methods)" },
    { BOOL("tp_comm_overlap", struct parallelism, tp_comm_overlap, "false"),
      .doc = "overlap TP communication with compute" },
    /* Megatron-LM async_tensor_model_parallel_allreduce (on since late 2021; off with
     * --no-async-tensor-model-parallel-allreduce): the column-parallel GEMM's input-gradient
     * all-reduce runs alongside its weight gradient (layer.c). Sequence parallelism always
     * overlaps its reduce-scatter. */
    { BOOL("tp_async_allreduce", struct parallelism, tp_async_allreduce, "true"),
      .doc = "backward TP all-reduce of the input gradient overlaps the weight gradient" },
};
static const struct section parallelism_section = SECTION("parallelism", parallelism_rows, 0);

static const struct field ddp_rows[] = {
    /* PyTorch DDP bucket_cap_mb = 25 (x 1024 * 1024 bytes) and _DEFAULT_FIRST_BUCKET_BYTES =
     * 1 MiB (formulas.md §3.1, [PT distributed.py]). */
    { QTY("bucket_size", struct ddp_cfg, bucket_bytes, UNIT_BYTES, "25 MiB"),
      .doc = "gradient bucket size" },
    { QTY("first_bucket_size", struct ddp_cfg, first_bucket_bytes, UNIT_BYTES, "1 MiB"),
      .doc = "first (smallest) bucket" },
    /* Megatron's overlap_grad_reduce defaults to False (formulas.md §3.1, [MEG
     * distributed_data_parallel_config.py]); PyTorch DDP always overlaps. */
    { BOOL("overlap", struct ddp_cfg, overlap, "true"), .given = GIVEN_DDP_OVERLAP,
      .def_doc = "false for megatron and deepspeed (stage 0), else true",
      .doc = "all-reduce buckets during backward" },
    /* Megatron-LM --gradient-accumulation-fusion (on by default; apex
     * fused_weight_gradient_mlp_cuda): the weight-gradient GEMM adds into the
     * main_grad buffer. Without it DistributedDataParallel's param_hook runs
     * main_grad.add_(param.grad) for every parameter each micro-batch
     * (megatron/model/distributed.py), as in Megatron-LM before late 2021. */
    { BOOL("grad_accum_fusion", struct ddp_cfg, grad_accum_fusion, "true"),
      .doc = "megatron: weight-gradient GEMMs accumulate into main_grad (no separate add)" },
    /* Megatron-LM --DDP-impl {local, torch} (megatron/arguments.py of 2021): its own
     * contiguous-buffer DDP (ddp.c) or torch.nn.parallel.DistributedDataParallel; the
     * NAR21 Table 1 scripts (examples/sc21/run_table_1.sh) use torch when pp = 1. */
    { ENUM("impl", struct ddp_cfg, impl, ddp_impl_names, "auto"),
      .doc = "gradient reduction wrapper: auto (the framework's), megatron, pytorch" },
};
static const struct section ddp_section = SECTION("ddp", ddp_rows, 0);

/* DeepSpeed ZeRO config defaults, in elements (formulas.md §2.3, [DS config.py]). */
static const struct field zero_rows[] = {
    { QTY("reduce_bucket_size", struct zero_cfg, reduce_bucket_size, UNIT_COUNT, "5e8"),
      .doc = "elements per gradient reduce bucket" },
    { QTY("allgather_bucket_size", struct zero_cfg, allgather_bucket_size, UNIT_COUNT, "5e8"),
      .doc = "elements per parameter all-gather bucket (not modelled: all_gather_into_tensor "
             "ignores it)" },
    { QTY("stage3_prefetch_bucket_size", struct zero_cfg, prefetch_bucket_size, UNIT_COUNT, "5e7"),
      .flags = F_ZERO_OK, .doc = "elements prefetched ahead (ZeRO-3); 0 = no prefetch" },
    /* Axolotl's ZeRO-3 JSONs write 0: the prefetch window min(max_live - available, bucket) is
     * then empty, nothing is prefetched (DeepSpeed partitioned_param_coordinator.py). */
    { QTY("stage3_max_live_parameters", struct zero_cfg, max_live_parameters, UNIT_COUNT, "1e9"),
      .flags = F_ZERO_OK, .doc = "elements resident before release (ZeRO-3); 0 = no prefetch" },
    { QTY("stage3_param_persistence_threshold", struct zero_cfg, param_persistence_threshold,
          UNIT_COUNT, "1e5"),
      .flags = F_ZERO_OK, .doc = "parameters smaller than this stay unpartitioned (ZeRO-3)" },
    { QTY("stage3_max_reuse_distance", struct zero_cfg, max_reuse_distance, UNIT_COUNT, "1e9"),
      .flags = F_ZERO_OK, .doc = "keep parameters reused within this many elements (ZeRO-3)" },
    { BOOL("overlap_comm", struct zero_cfg, overlap_comm, "false"), .given = GIVEN_OVERLAP_COMM,
      .def_doc = "true for zero3 with coalesced gathers, else false",
      .doc = "overlap reduction with backward" },
    { BOOL("contiguous_gradients", struct zero_cfg, contiguous_gradients, "true"),
      .doc = "copy gradients into one contiguous buffer" },
    { ENUM("stage3_gather", struct zero_cfg, stage3_gather, zero3_gather_names, "coalesced"),
      .doc = "ZeRO-3 parameter gathers: coalesced (DeepSpeed since mid-2021) or per_param_sync "
             "(0.3.13-0.4.x: one blocking all-gather per parameter, no prefetch)" },
};
static const struct section zero_section = SECTION("zero", zero_rows, 0);

/* PyTorch FSDP defaults (formulas.md §3.3, [PT fsdp/api.py]). */
static const struct field fsdp_rows[] = {
    { ENUM("backward_prefetch", struct fsdp_cfg, backward_prefetch, prefetch_names, "backward_pre"),
      .doc = "when the next all-gather is issued in backward" },
    { BOOL("forward_prefetch", struct fsdp_cfg, forward_prefetch, "false"),
      .doc = "explicit forward prefetch" },
    { BOOL("limit_all_gathers", struct fsdp_cfg, limit_all_gathers, "true"),
      .doc = "rate limiter: at most two units unsharded" },
    { BOOL("reshard_after_forward", struct fsdp_cfg, reshard_after_forward, "true"),
      .doc = "free gathered parameters after forward" },
    { .key = "version",
      .type = FT_INT,
      AT(struct fsdp_cfg, version),
      .min = 1,
      .max = 2,
      .def = "1",
      .given = GIVEN_FSDP_VERSION,
      .def_doc = "1; 2 for zero2 read as FSDP under pp > 1",
      .doc = "1 = FlatParameter FSDP, 2 = per-parameter FSDP2" },
    { ENUM("param_dtype", struct fsdp_cfg, param_dtype, grad_dtype_names, "bf16"),
      .given = GIVEN_PARAM_DTYPE, .def_doc = "training.precision (bf16 for fp8)",
      .doc = "MixedPrecision.param_dtype" },
    { ENUM("reduce_dtype", struct fsdp_cfg, reduce_dtype, grad_dtype_names, "bf16"),
      .given = GIVEN_REDUCE_DTYPE, .def_doc = "training.precision (bf16 for fp8)",
      .doc = "MixedPrecision.reduce_dtype" },
    { ENUM("buffer_dtype", struct fsdp_cfg, buffer_dtype, grad_dtype_names, "bf16"),
      .given = GIVEN_BUFFER_DTYPE, .def_doc = "training.precision (bf16 for fp8)",
      .doc = "MixedPrecision.buffer_dtype (module buffers are not modelled)" },
    /* ---- framework profiles: HSDP's shard group (torchtitan, fms-fsdp, Accelerate) ---- */
    { INT("shard_group", struct fsdp_cfg, shard_group, 0, "0"), .flags = F_ZERO_OK,
      .doc = "hsdp: data-parallel ranks per shard group (a divisor of dp); 0 = the "
             "data-parallel peers of one node" },
};
static const struct section fsdp_section = SECTION("fsdp", fsdp_rows, 0);

static const struct field nccl_rows[] = {
    { ENUM("algo", struct nccl_cfg, algo, schema_algo_names, "auto"), .doc = "like NCCL_ALGO" },
    { ENUM("proto", struct nccl_cfg, proto, schema_proto_names, "auto"), .doc = "like NCCL_PROTO" },
    { STR("version", struct nccl_cfg, version_text), .def_doc = "the model's tables (2.30)",
      .doc = "NCCL release (e.g. \"2.18.1\"): which algorithms it offers" },
};
static const struct section nccl_section = SECTION("nccl", nccl_rows, 0);

/* The framework's CPU time per operation class (scenario.h struct host_cfg, docs/host.md).
 * The defaults are PyTorch eager's per-op cost and nothing else: a framework profile adds
 * the rest with its sources. */
static const struct field host_rows[] = {
    { QTY("kernel_launch", struct host_cfg, kernel_launch, UNIT_TIME, "4 us"), .flags = F_ZERO_OK,
      .doc = "host time per kernel launched (PyTorch eager dispatch + cudaLaunchKernel)" },
    { QTY("autograd_node", struct host_cfg, autograd_node, UNIT_TIME, "0 s"), .flags = F_ZERO_OK,
      .doc = "per autograd node, created in forward and run in backward" },
    { QTY("python_op", struct host_cfg, python_op, UNIT_TIME, "0 s"), .flags = F_ZERO_OK,
      .doc = "per Python-level op without a kernel (views, splits, module calls)" },
    { QTY("rng_fork", struct host_cfg, rng_fork, UNIT_TIME, "0 s"), .flags = F_ZERO_OK,
      .doc = "per tensor-parallel RNG tracker fork around a dropout" },
    { QTY("checkpoint_region", struct host_cfg, checkpoint_region, UNIT_TIME, "0 s"),
      .flags = F_ZERO_OK, .doc = "per activation-checkpointed layer (bookkeeping, re-entry)" },
    { QTY("collective_enqueue", struct host_cfg, collective_enqueue, UNIT_TIME, "32 us"),
      .flags = F_ZERO_OK, .doc = "per collective call (ProcessGroupNCCL enqueue)" },
    { QTY("step", struct host_cfg, step, UNIT_TIME, "0 s"), .flags = F_ZERO_OK,
      .doc = "per step, at the optimizer: the host waits for the GPU, then spends this" },
    { BOOL("p2p_sync", struct host_cfg, p2p_sync, "false"),
      .doc = "the CPU waits for each pipeline receive before issuing the step's layers" },
    { BOOL("micro_batch_sync", struct host_cfg, micro_batch_sync, "false"),
      .doc = "the CPU waits for the GPU's last kernel before each micro-batch's forward" },
    { NUM("jitter", struct host_cfg, jitter, 0, 1, "0"), .flags = F_ZERO_OK,
      .doc = "spread of the ranks' host speeds (coefficient of variation; with --ranks all)" },
    { INT("seed", struct host_cfg, seed, 0, "1"), .flags = F_ZERO_OK,
      .doc = "seed of the ranks' host speeds" },
};
static const struct section host_section = SECTION("host", host_rows, 0);

static const struct field simulation_rows[] = {
    { INT("straggler_rank", struct sim_cfg, straggler_rank, -1, "-1"),
      .doc = "with --ranks all, this rank computes slower; -1 = none" },
    { NUM("straggler_slowdown", struct sim_cfg, straggler_slowdown, 1, 0, "1"),
      .doc = "compute-time multiplier of the straggler" },
    { QTY("step_overhead", struct sim_cfg, step_overhead, UNIT_TIME, "0 s"), .flags = F_ZERO_OK,
      .doc = "fixed host time per step" },
};
static const struct section simulation_section = SECTION("simulation", simulation_rows, 0);

static const struct field scenario_rows[] = {
    { STR("name", struct scenario, name), .def_doc = "file stem", .doc = "scenario name" },
    { STR("description", struct scenario, description), .doc = "free text" },
    { .key = "hardware",
      .type = FT_REF,
      AT(struct scenario, hw),
      .sub = &schema_hardware,
      .flags = F_REQUIRED,
      .doc = "hardware name, path or inline mapping" },
    { .key = "workload",
      .type = FT_REF,
      AT(struct scenario, model),
      .sub = &schema_workload,
      .flags = F_REQUIRED,
      .doc = "workload name, path or inline mapping" },
    { SECT0("cluster", cluster_section), .doc = "job size" },
    { SECT("training", struct scenario, train, training_section), .flags = F_REQUIRED,
      .doc = "training settings" },
    { SECT("parallelism", struct scenario, par, parallelism_section), .doc = "parallel layout" },
    { SECT("ddp", struct scenario, ddp, ddp_section), .doc = "PyTorch DDP knobs" },
    { SECT("zero", struct scenario, zero, zero_section), .doc = "DeepSpeed ZeRO knobs" },
    { SECT("fsdp", struct scenario, fsdp, fsdp_section), .doc = "PyTorch FSDP knobs" },
    { SECT("nccl", struct scenario, nccl, nccl_section), .doc = "collective algorithm choice" },
    { SECT("simulation", struct scenario, sim, simulation_section), .doc = "simulation knobs" },
    { SECT("host", struct scenario, host, host_section),
      .doc = "the framework's CPU time per operation class" },
};
const struct section schema_scenario = SECTION("", scenario_rows, 0);

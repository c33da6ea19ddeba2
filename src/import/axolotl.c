/*
 * axolotl.c - an Axolotl training YAML to a simtrain scenario (docs/import.md, "axolotl"):
 * the model (base_model, whose config.json --model-config gives), the batch and sequence, the
 * precision Axolotl resolves, the attention kernel, LoRA / QLoRA / LLM.int8 adapters, the
 * optimizer and activation checkpointing; axolotl_dist.c does the distributed part.
 *
 * Axolotl reads its YAML with PyYAML (YAML 1.1) into pydantic models that drop unknown keys
 * and treat null as absent (utils/config/__init__.py:494-499), and resolves what depends on
 * the machine from the launcher: WORLD_SIZE (the GPU count: --gpus here) and
 * torch.cuda.is_bf16_supported() (`bf16: auto`, from --hardware here). Without DeepSpeed the
 * HF Trainer trains the parameters in the dtype Axolotl loaded them in (bf16 when bf16 is on,
 * utils/config/__init__.py:191-196): no fp32 master copy, 16-bit gradients, AdamW moments in
 * the parameter dtype; DeepSpeed keeps an fp32 partition (deepspeed.c).
 */
#include <stdlib.h>
#include <string.h>

#include "import/axolotl_internal.h"

const struct yt_node *ax_key(struct ax *a, const char *key)
{
    const struct yt_node *kn = NULL;

    imp_get_key(a->root, key, &kn);
    return kn;
}

const struct yt_node *ax_val(struct ax *a, const char *key)
{
    const struct yt_node *v = imp_get_key(a->root, key, NULL);

    if (a->nused < (int)ARRAY_LEN(a->used))
        a->used[a->nused++] = key;
    return imp_null(v) ? NULL : v;
}

const char *ax_from(struct ax *a, const char *key)
{
    return imp_fmt(a->im, "%s %s", imp_at(a->im, ax_key(a, key)), key);
}

int ax_bool(struct ax *a, const char *key, bool *out)
{
    const struct yt_node *v = ax_val(a, key);

    *out = false;
    return v ? imp_bool(a->im, v, out) : 0;
}

/* An integer key with Axolotl's default when absent. */
static int int_key(struct ax *a, const char *key, long long deflt, long long *out)
{
    const struct yt_node *v = ax_val(a, key);

    *out = deflt;
    return v ? imp_int(a->im, v, 1, 1LL << 30, out) : 0;
}

/* ---- model ------------------------------------------------------------------------------ */

static int model(struct ax *a)
{
    const struct yt_node *bm = ax_val(a, "base_model");

    ax_val(a, "base_model_config");
    if (!bm)
        return imp_error(a->im, NULL, "%s: no base_model (the model to train)", a->f->path);
    if (imp_str(bm) && (strstr(imp_str(bm), "BNB") || strstr(imp_str(bm), "bnb") ||
                        strstr(imp_str(bm), "NF4") || strstr(imp_str(bm), "nf4")))
        imp_note(a->im, FATE_APPROX, ax_key(a, "base_model"),
                 "base_model '%s' looks pre-quantized: its own quantization_config decides the "
                 "NF4 layout (loaders/model.py:692-711); Axolotl's (double quantization) is "
                 "assumed",
                 imp_str(bm));
    return imp_model_config(a->im, ax_key(a, "base_model"), bm);
}

/* ---- precision ---------------------------------------------------------------------------- */

/* utils/config/__init__.py resolve_dtype(): bf16 "auto" is the GPU's bf16 support. */
static int precision(struct ax *a)
{
    const struct yt_node *b = ax_val(a, "bf16"), *h = ax_val(a, "fp16");
    bool bf = false, fp = false, fp_set = h != NULL, b16 = false, f16 = false, f32 = false, fp8;
    bool autob = !b || imp_is(b, "auto");
    const char *why;

    if ((!autob && imp_bool(a->im, b, &bf)) || (h && imp_bool(a->im, h, &fp)) ||
        ax_bool(a, "bfloat16", &b16) || ax_bool(a, "float16", &f16) ||
        ax_bool(a, "float32", &f32) || ax_bool(a, "fp8", &fp8))
        return -1;
    if (autob && !fp) {
        bf = imp_hw_bf16(a->im);
        if (!bf && !fp_set && !f16)
            fp = true;
        why = imp_fmt(a->im, "%s \"auto\" -> %s (%s: %s; utils/config/__init__.py:156-167)",
                      b ? ax_from(a, "bf16") : "bf16 absent: auto (utils/schemas/config.py:559)",
                      bf ? "bf16" : "fp16", a->im->hw->name,
                      bf ? "the GPU computes bf16" : "no bf16 on the GPU, so fp16");
    } else {
        why = bf ? ax_from(a, "bf16") : fp ? ax_from(a, "fp16") : "bf16 and fp16 off: fp32";
    }
    a->precision = b16 || bf ? "bf16" : f16 || fp ? "fp16" : "fp32";
    if (b16 || f16 || f32)
        why = ax_from(a, b16 ? "bfloat16" : f16 ? "float16" : "float32");
    if (fp8) {
        if (!(a->im->hw->gpu.flops[DT_FP8] > 0))
            return imp_error(a->im, ax_key(a, "fp8"),
                             "fp8 training needs an fp8 peak, and '%s' has none", a->im->hw->name);
        imp_note(a->im, FATE_APPROX, ax_key(a, "fp8"),
                 "fp8: TorchAO float8 training (core/trainers/base.py:682-700) timed as "
                 "simtrain's fp8 GEMMs, 16-bit weights kept");
        a->precision = "fp8";
        why = ax_from(a, "fp8");
    }
    imp_put(a->im, "training.precision", a->precision, why);
    if (ax_val(a, "tf32") && strcmp(a->precision, "fp32") == 0) {
        bool tf32;
        if (ax_bool(a, "tf32", &tf32))
            return -1;
        if (tf32)
            imp_note(a->im, FATE_APPROX, ax_key(a, "tf32"),
                     "tf32: fp32 matmuls on TF32 tensor cores are timed at the fp32 peak");
    }
    return 0;
}

/* ---- batch and sequence ------------------------------------------------------------------------
 */

static int batch(struct ax *a)
{
    const struct yt_node *bs = ax_val(a, "batch_size"), *ms = ax_val(a, "max_steps");
    long long bsz = 0, steps;
    bool pack, pad;

    if (int_key(a, "micro_batch_size", 1, &a->micro) ||
        int_key(a, "gradient_accumulation_steps", 0, &a->gas) ||
        int_key(a, "sequence_len", 512, &a->seq) || ax_bool(a, "sample_packing", &pack) ||
        ax_bool(a, "pad_to_sequence_len", &pad))
        return -1;
    if (!a->gas && bs && imp_int(a->im, bs, 1, 1LL << 30, &bsz))
        return -1;
    if (!a->gas)
        a->gas = bsz ? (bsz / a->micro > 0 ? bsz / a->micro : 1) : 1;
    imp_putf(a->im, "training.seq_len",
             ax_val(a, "sequence_len") ? ax_from(a, "sequence_len")
                                       : "sequence_len absent: 512 (utils/schemas/config.py:665)",
             "%lld", a->seq);
    imp_putf(
        a->im, "training.micro_batch",
        ax_val(a, "micro_batch_size")
            ? imp_fmt(a->im, "%s (per GPU)%s", ax_from(a, "micro_batch_size"),
                      pack ? "; packed: one row of micro_batch_size x sequence_len tokens" : "")
            : "micro_batch_size absent: 1 (utils/schemas/training.py:77)",
        "%lld", a->micro);
    /* the product's source key, where a refusal of it points: the accumulation, the batch size
     * it was derived from, else the micro-batch (one imp_at() call: the one the comment names) */
    imp_putf(a->im, "training.global_batch",
             imp_fmt(a->im,
                     "= micro_batch_size %lld x gradient_accumulation_steps %lld (%s) x dp %d "
                     "(utils/config/__init__.py:222-230)",
                     a->micro, a->gas,
                     ax_val(a, "gradient_accumulation_steps")
                         ? imp_at(a->im, ax_key(a, "gradient_accumulation_steps"))
                     : bs ? imp_fmt(a->im, "batch_size %lld at %s / micro", bsz,
                                    imp_at(a->im, ax_key(a, "batch_size")))
                     : ax_val(a, "micro_batch_size")
                         ? imp_fmt(a->im, "absent: 1; micro_batch_size at %s",
                                   imp_at(a->im, ax_key(a, "micro_batch_size")))
                         : "absent: 1",
                     a->dp),
             "%lld", a->micro * a->gas * a->dp);
    if (pack)
        imp_note(a->im, FATE_NOTE, ax_key(a, "sample_packing"),
                 "sample_packing: the GEMMs see micro_batch_size x sequence_len tokens; attention "
                 "is counted as if each row held one sample (an upper bound: packed samples "
                 "attend within themselves)");
    else if (!pad)
        imp_note(a->im, FATE_APPROX,
                 ax_key(a, "sample_packing") ? ax_key(a, "sample_packing")
                                             : ax_key(a, "sequence_len"),
                 "without sample_packing or pad_to_sequence_len each batch is padded to its "
                 "longest sample (core/builders/causal.py:391-394): timed at sequence_len, the "
                 "worst case");
    if (ms) {
        if (imp_int(a->im, ms, 1, 1LL << 40, &steps))
            return -1;
        imp_putf(a->im, "training.tokens",
                 imp_fmt(a->im, "%s x global_batch x seq_len", ax_from(a, "max_steps")), "%.0f",
                 (double)steps * (double)(a->micro * a->gas * a->dp) * (double)a->seq);
    }
    return 0;
}

/* ---- attention ------------------------------------------------------------------------------ */

/* The legacy booleans, in Axolotl's priority order (utils/schemas/enums.py:117-124). */
static const char *const legacy_attn[][2] = {
    { "xformers_attention", "xformers" },
    { "sage_attention", "sage" },
    { "flex_attention", "flex_attention" },
    { "flash_attention", "flash_attention_2" },
    { "sdp_attention", "sdpa" },
    { "eager_attention", "eager" },
};

static int attention(struct ax *a)
{
    const struct yt_node *ai = ax_val(a, "attn_implementation"), *legacy = NULL;
    const char *impl = imp_str(ai), *why, *how = NULL;
    bool exact = false, standard = false;

    for (size_t i = 0; i < ARRAY_LEN(legacy_attn); i++) {
        bool on;
        if (ax_bool(a, legacy_attn[i][0], &on))
            return -1;
        if (on && !legacy) {
            legacy = ax_key(a, legacy_attn[i][0]);
            if (ai)
                return imp_error(a->im, legacy,
                                 "%s together with attn_implementation (Axolotl refuses both: "
                                 "utils/schemas/config.py:1550-1555)",
                                 legacy_attn[i][0]);
            impl = legacy_attn[i][1];
        }
    }
    why = ai       ? ax_from(a, "attn_implementation")
          : legacy ? imp_fmt(a->im, "%s %s -> %s", imp_at(a->im, legacy), legacy->text, impl)
                   : "attn_implementation absent: transformers' default sdpa";
    if (!impl)
        impl = "sdpa";
    if (strcmp(impl, "flash_attention_2") == 0 ||
        strcmp(impl, "kernels-community/flash-attn2") == 0)
        exact = true;
    else if (strcmp(impl, "eager") == 0)
        standard = exact = true;
    else if (strcmp(impl, "sdpa") == 0)
        how = a->im->model.window
                  ? "sdpa: PyTorch's kernel with a sliding-window mask computes every block; "
                    "timed as FlashAttention-2 skipping the blocks outside the window"
                  : "sdpa: PyTorch picks its flash or memory-efficient kernel; timed as "
                    "FlashAttention-2";
    else if (strstr(impl, "flash-attn3") || strcmp(impl, "flash_attention_3") == 0)
        how = "FlashAttention-3 (Hopper) timed as FlashAttention-2";
    else if (strcmp(impl, "flex_attention") == 0 || strcmp(impl, "xformers") == 0 ||
             strcmp(impl, "sage") == 0 || strstr(impl, "kernels-community/") ||
             strcmp(impl, "fp8") == 0)
        how = imp_fmt(a->im, "%s timed as FlashAttention-2", impl);
    else
        return imp_error(a->im, ai ? ai : legacy,
                         "attention implementation '%s' is not one "
                         "Axolotl accepts (utils/schemas/enums.py)",
                         impl);
    imp_put(a->im, "training.attention", standard ? "standard" : "flash",
            imp_fmt(a->im, "%s%s", why, exact ? "" : " (approximated)"));
    if (how)
        imp_note(a->im, FATE_APPROX, ai ? ax_key(a, "attn_implementation") : legacy, "%s", how);
    return 0;
}

/* ---- adapters ----------------------------------------------------------------------------- */

/* PEFT module names to simtrain targets (suffix match, as LoraConfig's target_modules). */
static const char *const target_names[][2] = {
    { "q_proj", "q" },       { "k_proj", "k" },   { "v_proj", "v" },       { "o_proj", "o" },
    { "gate_proj", "gate" }, { "up_proj", "up" }, { "down_proj", "down" }, { "w1", "gate" },
    { "w3", "up" },          { "w2", "down" },    { "dense", "o" },        { "fc1", "up" },
    { "fc2", "down" },
};

static void add_target(char *list, size_t cap, const char *t)
{
    if (strstr(list, t) && (strstr(list, t)[strlen(t)] == ',' || strstr(list, t)[strlen(t)] == ']'))
        return;
    snprintf(list + strlen(list) - 1, cap - strlen(list) + 1, "%s%s]", list[1] == ']' ? "" : ", ",
             t);
}

static int lora_targets(struct ax *a)
{
    const struct yt_node *tm = ax_val(a, "lora_target_modules");
    bool linear, gated = strcmp(imp_get(a->im, "workload.activation"), "gelu") != 0;
    char list[96] = "[]";
    const char *why;
    static const char *const all[] = { "q", "k", "v", "o", "gate", "up", "down" };

    if (ax_bool(a, "lora_target_linear", &linear))
        return -1;
    if (linear) {
        if (strcmp(a->im->model.type, "gpt2") == 0)
            return imp_error(a->im, ax_key(a, "lora_target_linear"),
                             "lora_target_linear finds no nn.Linear in GPT-2 (its projections "
                             "are Conv1D; loaders/adapter.py:54-71)");
        for (size_t i = 0; i < ARRAY_LEN(all); i++)
            if (strcmp(all[i], "gate") != 0 || gated)
                add_target(list, sizeof(list), all[i]);
    }
    for (size_t i = 0; tm && tm->kind == YT_SEQ && i < tm->count; i++) {
        const char *n = imp_str(tm->items[i]), *t = NULL;
        for (size_t j = 0; n && j < ARRAY_LEN(target_names) && !t; j++)
            if (strcmp(n, target_names[j][0]) == 0)
                t = target_names[j][1];
        if (n && (strcmp(n, "qkv_proj") == 0 || strcmp(n, "gate_up_proj") == 0 ||
                  strcmp(n, "query_key_value") == 0))
            return imp_error(a->im, tm->items[i],
                             "an adapter on the fused projection '%s' is not modelled (one "
                             "adapter over several matrices)",
                             n);
        if (!t)
            return imp_error(a->im, tm->items[i],
                             "LoRA target '%s' is not a projection simtrain adapts (q_proj, "
                             "k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj)",
                             n ? n : "");
        add_target(list, sizeof(list), t);
    }
    if (tm && tm->kind != YT_SEQ)
        return imp_error(a->im, tm, "lora_target_modules: expected a list of module names");
    if (strcmp(list, "[]") == 0)
        return imp_error(a->im, ax_key(a, "adapter"),
                         "no LoRA targets: set lora_target_linear or lora_target_modules");
    why = linear && tm
              ? imp_fmt(a->im, "%s, union with %s (loaders/adapter.py:174-182)",
                        ax_from(a, "lora_target_linear"), ax_from(a, "lora_target_modules"))
          : linear ? imp_fmt(a->im, "%s: every Linear but lm_head (loaders/adapter.py:54-71)",
                             ax_from(a, "lora_target_linear"))
                   : ax_from(a, "lora_target_modules");
    imp_put(a->im, "training.lora.targets", list, why);
    if (linear && a->im->model.fused_qkv)
        imp_note(a->im, FATE_APPROX, ax_key(a, "lora_target_linear"),
                 "lora_target_linear on %s's fused qkv_proj and gate_up_proj: one adapter over "
                 "each fused matrix, counted as separate q, k, v and gate, up adapters",
                 a->im->model.type);
    if (linear && a->im->model.experts > 0)
        imp_note(a->im, FATE_APPROX, ax_key(a, "lora_target_linear"),
                 "lora_target_linear on an MoE model: experts adapted (and quantized) as their "
                 "Linear modules are in transformers 4.x; under the transformers 5.x Axolotl pins "
                 "the fused 3-D experts get neither, and the router gets an adapter");
    return 0;
}

static int modules_to_save(struct ax *a)
{
    const struct yt_node *m = ax_val(a, "lora_modules_to_save");
    char list[32] = "[]";

    if (!m)
        return 0;
    if (m->kind != YT_SEQ)
        return imp_error(a->im, m, "lora_modules_to_save: expected a list of module names");
    for (size_t i = 0; i < m->count; i++) {
        const char *n = imp_str(m->items[i]);
        if (n &&
            (strcmp(n, "embed_tokens") == 0 || strcmp(n, "wte") == 0 || strcmp(n, "embed_in") == 0))
            add_target(list, sizeof(list), "embed");
        else if (n && (strcmp(n, "lm_head") == 0 || strcmp(n, "embed_out") == 0))
            add_target(list, sizeof(list), "head");
        else
            return imp_error(a->im, m->items[i],
                             "lora_modules_to_save '%s': only the embedding (embed_tokens) and "
                             "the LM head (lm_head) are modelled",
                             n ? n : "");
    }
    imp_put(a->im, "training.lora.modules_to_save", list,
            imp_fmt(a->im,
                    "%s: trained copies beside the frozen modules (PEFT "
                    "ModulesToSaveWrapper)",
                    ax_from(a, "lora_modules_to_save")));
    return 0;
}

static int lora_numbers(struct ax *a)
{
    const struct yt_node *r = ax_val(a, "lora_r"), *al = ax_val(a, "lora_alpha"),
                         *dr = ax_val(a, "lora_dropout");
    long long rank = 8;
    double alpha = 8, drop = 0;
    bool dora;

    if ((r && imp_int(a->im, r, 1, 1 << 20, &rank)) || (al && imp_num(a->im, al, &alpha)) ||
        (dr && imp_num(a->im, dr, &drop)) || ax_bool(a, "peft_use_dora", &dora))
        return -1;
    imp_putf(a->im, "training.lora.rank",
             r ? ax_from(a, "lora_r") : "lora_r absent: PEFT's default r=8 (LoraConfig)", "%lld",
             rank);
    imp_putf(a->im, "training.lora.alpha",
             al ? ax_from(a, "lora_alpha") : "lora_alpha absent: PEFT's default 8", "%g", alpha);
    imp_putf(a->im, "training.lora.dropout",
             dr ? ax_from(a, "lora_dropout")
                : "lora_dropout absent: 0.0 (utils/schemas/peft.py:80, 233-238)",
             "%g", drop);
    if (dora)
        imp_put(a->im, "training.lora.dora", "true", ax_from(a, "peft_use_dora"));
    return 0;
}

static int double_quant(struct ax *a)
{
    const struct yt_node *kw = ax_val(a, "bnb_config_kwargs"), *dq = NULL, *dk = NULL;
    bool on = true;

    if (kw && kw->kind == YT_MAP)
        dq = imp_get_key(kw, "bnb_4bit_use_double_quant", &dk);
    if (dq && imp_bool(a->im, dq, &on))
        return -1;
    imp_put(a->im, "training.lora.double_quant", on ? "true" : "false",
            dq ? imp_fmt(a->im, "%s bnb_config_kwargs.bnb_4bit_use_double_quant", imp_at(a->im, dk))
               : "Axolotl's QLoRA config: bnb_4bit_use_double_quant True "
                 "(loaders/model.py:712-738)");
    return 0;
}

static int adapter(struct ax *a)
{
    const struct yt_node *ad = ax_val(a, "adapter");
    bool b4, b8;
    const char *ft;

    if (ax_bool(a, "load_in_4bit", &b4) || ax_bool(a, "load_in_8bit", &b8))
        return -1;
    if (!ad) {
        if (b4 || b8)
            return imp_error(a->im, ax_key(a, b4 ? "load_in_4bit" : "load_in_8bit"),
                             "%s without an adapter (Axolotl refuses it: "
                             "utils/schemas/peft.py:180-188)",
                             b4 ? "load_in_4bit" : "load_in_8bit");
        imp_put(a->im, "training.finetune", "full", "adapter absent: full fine-tuning");
        return 0;
    }
    a->adapter = true;
    if (imp_is(ad, "qlora")) {
        if (!b4 || b8)
            return imp_error(a->im, ad,
                             "adapter qlora needs load_in_4bit true and load_in_8bit "
                             "false (utils/schemas/peft.py:201-224)");
        a->qlora = true;
        ft = "qlora";
    } else if (imp_is(ad, "lora")) {
        if (b4)
            return imp_error(a->im, ax_key(a, "load_in_4bit"),
                             "load_in_4bit with adapter lora: Axolotl builds its NF4 config "
                             "for adapter qlora only (loaders/model.py:712)");
        a->int8 = b8;
        ft = b8 ? "lora_int8" : "lora";
    } else {
        return imp_error(a->im, ad, "adapter '%s' is not modelled (lora, qlora)",
                         imp_str(ad) ? imp_str(ad) : "");
    }
    imp_put(a->im, "training.finetune", ft,
            a->int8    ? imp_fmt(a->im, "%s lora + %s: LLM.int8 base (loaders/model.py:740-751)",
                                 imp_at(a->im, ax_key(a, "adapter")), ax_from(a, "load_in_8bit"))
            : a->qlora ? imp_fmt(a->im, "%s qlora + %s", imp_at(a->im, ax_key(a, "adapter")),
                                 ax_from(a, "load_in_4bit"))
                       : ax_from(a, "adapter"));
    if (lora_numbers(a) || lora_targets(a) || modules_to_save(a) || (a->qlora && double_quant(a)))
        return -1;
    imp_note(a->im, FATE_NOTE, ax_key(a, "adapter"),
             "adapter: PEFT keeps the adapters in fp32 (autocast_adapter_dtype); counted as a "
             "16-bit copy with an fp32 master (2 B more per adapter parameter)");
    return 0;
}

/* ---- optimizer ---------------------------------------------------------------------------- */

static const char *const optimizers[][4] = {
    /* Axolotl / transformers name, simtrain optimizer, paged or "", training.optimizer_impl
     * (transformers trainer.py get_optimizer_cls_and_kwargs: adamw_torch is torch.optim.AdamW
     * with its foreach default, adamw_torch_fused passes fused=True, adamw_hf is
     * transformers' own AdamW, a loop over the parameters) */
    { "adamw_torch", "adamw", "", "foreach" },
    { "adamw_torch_fused", "adamw", "", "fused" },
    { "adamw_apex_fused", "adamw", "", "fused" },
    { "adamw_hf", "adamw", "", "for_loop" },
    { "adamw_bnb_8bit", "adam8bit", "", "" },
    { "adamw_8bit", "adam8bit", "", "" },
    /* torchao's low-bit AdamW: transformers' names (optimization get_optimizer_cls_and_kwargs:
     * adamw_torch_4bit / _8bit build torchao.optim.AdamW4bit / AdamW8bit) and Axolotl's own
     * (utils/schemas/enums.py CustomSupportedOptimizers ao_adamw_4bit / _8bit / _fp8, built in
     * core/builders/base.py from torchao.prototype.low_bit_optim) */
    { "adamw_torch_8bit", "torchao_adamw8bit", "", "" },
    { "adamw_torch_4bit", "torchao_adamw4bit", "", "" },
    { "ao_adamw_8bit", "torchao_adamw8bit", "", "" },
    { "ao_adamw_4bit", "torchao_adamw4bit", "", "" },
    { "ao_adamw_fp8", "torchao_adamwfp8", "", "" },
    { "paged_adamw_32bit", "adamw", "paged", "" },
    { "paged_adamw_8bit", "adam8bit", "paged", "" },
    { "paged_adamw", "adamw", "paged", "" },
    { "sgd", "sgd", "", "" },
    { "adafactor", "adafactor", "", "" },
};

static int optimizer(struct ax *a)
{
    const struct yt_node *o = ax_val(a, "optimizer");
    const char *name = o ? imp_str(o) : "adamw_torch_fused";

    for (size_t i = 0; name && i < ARRAY_LEN(optimizers); i++) {
        if (strcmp(name, optimizers[i][0]) != 0)
            continue;
        a->optimizer = optimizers[i][1];
        a->optimizer_at = ax_key(a, "optimizer");
        a->paged = strcmp(optimizers[i][2], "paged") == 0;
        imp_put(a->im, "training.optimizer", a->optimizer,
                o ? imp_fmt(a->im, "%s %s", ax_from(a, "optimizer"), name)
                  : "optimizer absent: adamw_torch_fused (utils/schemas/training.py:122-125)");
        if (optimizers[i][3][0])
            imp_put(a->im, "training.optimizer_impl", optimizers[i][3],
                    imp_fmt(a->im, "%s %s: how transformers builds it",
                            o ? ax_from(a, "optimizer") : "optimizer absent:", name));
        if (a->paged)
            imp_put(
                a->im, "training.paged_optimizer", "true",
                imp_fmt(a->im, "%s %s: bitsandbytes paged states", ax_from(a, "optimizer"), name));
        return 0;
    }
    return imp_error(a->im, o,
                     "optimizer '%s' is not modelled (AdamW, 8-bit AdamW, their paged "
                     "versions, torchao's 8-bit, 4-bit and FP8 AdamW, SGD, Adafactor)",
                     name ? name : "");
}

/* Parameter, gradient and state dtypes without DeepSpeed (DeepSpeed's are deepspeed.c's). */
static void state_dtypes(struct ax *a)
{
    bool low = strcmp(a->precision, "fp32") != 0;
    const char *g = strcmp(a->precision, "fp16") == 0 ? "fp16" : "bf16";

    if (a->adapter) {
        imp_put(a->im, "training.master_weights", "true",
                "adapters: fp32 (PEFT autocast_adapter_dtype; "
                "peft_model.py:109)");
        imp_put(a->im, "training.grad_dtype", "fp32", "adapters: fp32 gradients");
        return;
    }
    imp_put(a->im, "training.master_weights", "false",
            low ? imp_fmt(a->im,
                          "the weights load in %s and the HF Trainer steps them as they "
                          "are: no fp32 copy (utils/config/__init__.py:191-196)",
                          a->precision)
                : "fp32 training");
    imp_put(a->im, "training.grad_dtype", low ? g : "fp32",
            low ? "the parameters' dtype (pure 16-bit training)" : "fp32 training");
}

/* ---- activation checkpointing and offloading ------------------------------------------------ */

static int checkpointing(struct ax *a)
{
    const struct yt_node *gc = ax_val(a, "gradient_checkpointing"), *ao;
    bool on = false, off_on = false, sync = false;
    const char *why;

    ax_val(a, "gradient_checkpointing_kwargs");
    ao = ax_val(a, "activation_offloading");
    if (gc && imp_is(gc, "offload")) {
        on = off_on = true; /* utils/schemas/validation.py:1425-1442 */
    } else if (gc && imp_is(gc, "offload_disk")) {
        return imp_error(a->im, gc, "activations offloaded to disk are not modelled");
    } else if (gc && imp_bool(a->im, gc, &on)) {
        return -1;
    }
    if (ao && imp_is(ao, "legacy")) {
        off_on = sync = true;
    } else if (ao && imp_is(ao, "disk")) {
        return imp_error(a->im, ao, "activations offloaded to disk are not modelled");
    } else if (ao) {
        bool b;
        if (imp_bool(a->im, ao, &b))
            return -1;
        off_on |= b;
    }
    if (off_on && !on)
        return imp_error(a->im, ax_key(a, "activation_offloading"),
                         "activation_offloading needs gradient_checkpointing (Axolotl refuses "
                         "it: utils/schemas/validation.py:1444-1448)");
    why = gc ? ax_from(a, "gradient_checkpointing") : "gradient_checkpointing absent: false";
    if (off_on) {
        const char *aw =
            ao ? ax_from(a, "activation_offloading") : ax_from(a, "gradient_checkpointing");
        /* core/builders/base.py:592-599 and loaders/model.py:342-368 */
        imp_put(a->im, "training.recompute", a->adapter ? "none" : "full",
                a->adapter ? imp_fmt(a->im,
                                     "%s with an adapter: offloading replaces the HF "
                                     "checkpointing (core/builders/base.py:592-599)",
                                     aw)
                           : imp_fmt(a->im,
                                     "%s: every layer wrapped by checkpoint_wrapper "
                                     "(loaders/model.py:342-368)",
                                     why));
        imp_put(a->im, "training.activation_offload", sync ? "sync" : "streams",
                imp_fmt(a->im, "%s: TRL OffloadActivations%s", aw,
                        sync ? " without streams (legacy)" : ""));
        return 0;
    }
    imp_put(a->im, "training.recompute", on ? "full" : "none",
            on ? imp_fmt(a->im, "%s: HF checkpoints every decoder layer", why) : why);
    return 0;
}

/* ---- the import ---------------------------------------------------------------------------- */

int imp_axolotl(struct imp *im)
{
    struct ax a = { .im = im };

    a.f = imp_read(im, im->rq->files[0], "Axolotl config", false);
    if (!a.f)
        return -1;
    a.root = a.f->doc->root;
    if (ax_refusals(&a) || model(&a) || ax_parallel(&a) || precision(&a) || batch(&a) ||
        attention(&a) || adapter(&a) || ax_unfrozen(&a) || optimizer(&a) || checkpointing(&a) ||
        ax_distributed(&a) || ax_kernels(&a))
        return -1;
    if (!a.deepspeed)
        state_dtypes(&a);
    imp_put(im, "training.model_code", "hf", "Axolotl trains transformers' modules (and PEFT's)");
    imp_put_framework(im, "axolotl", "the framework profile of Axolotl");
    ax_list_unread(&a);
    return im->errors ? -1 : 0;
}

/* test_modules.c - the per-module attribution of activation marks (strategy/modules.c, the
 * engine's per-module tracker): modules sum to the categories they split, at the peak and at
 * the end of the step, on every shipped scenario and on the builder's other paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "run/run.h"
#include "strategy/strategy.h"
#include "support.h"

/* Every rank of run r: the modules sum exactly to activations + logits, at the peak and at the
 * end, and no program ran out of attributions. */
static void check_run(const char *what, const struct run *r)
{
    for (int k = 0; k < r->nprogs; k++)
        if (r->progs[k]->mtag_overflow)
            fail_msg("%s: stage %d: attributions overflow", what, k);
    for (int i = 0; i < r->sim.nranks; i++) {
        const struct rank_result *rr = &r->sim.ranks[i];
        int64_t peak = 0, end = 0;
        for (int m = 0; m < MM_COUNT; m++) {
            peak += rr->mod_at_peak[m];
            end += rr->mod_cur[m];
            if (rr->mod_at_peak[m] < 0)
                fail_msg("%s: rank %d: %s negative at the peak", what, rr->rank, mmod_name(m));
        }
        if (peak != rr->at_peak[MC_ACT] + rr->at_peak[MC_LOGITS] ||
            end != rr->cur[MC_ACT] + rr->cur[MC_LOGITS])
            fail_msg("%s: rank %d: modules %lld / %lld, categories %lld / %lld", what, rr->rank,
                     (long long)peak, (long long)end,
                     (long long)(rr->at_peak[MC_ACT] + rr->at_peak[MC_LOGITS]),
                     (long long)(rr->cur[MC_ACT] + rr->cur[MC_LOGITS]));
    }
}

static void check(const char *file, const char *const *sets, bool all_ranks)
{
    struct scenario *s = test_load(file, NULL, sets);
    struct run r;
    char what[256];

    snprintf(what, sizeof(what), "%s%s%s", file, sets ? " --set " : "", sets ? sets[0] : "");
    test_simulate(s, all_ranks, &r);
    check_run(what, &r);
    run_release(&r);
    cfg_free(s);
}

/* Every shipped scenario: modules account for every byte of activations and logits. */
static void test_modules_every_shipped_scenario(void **state)
{
    DIR *d = opendir("scenarios");
    struct dirent *e;
    int n = 0;

    (void)state;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        char file[300];
        if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0)
            continue;
        snprintf(file, sizeof(file), "scenarios/%s", e->d_name);
        check(file, NULL, false);
        n++;
    }
    closedir(d);
    assert_true(n >= 10);
}

/* The builder's other paths: each recompute mode, recompute of some layers, the split backward
 * of ZB-H1, interleaving, LitGPT's retained QLoRA inputs, every rank simulated. */
static void test_modules_builder_paths(void **state)
{
    static const char *const cases[][4] = {
        { "scenarios/ddp_8gpu.yaml", "training.recompute=full", NULL },
        { "scenarios/ddp_8gpu.yaml", "training.recompute=selective",
          "training.attention=standard" },
        { "scenarios/70b_256gpu_tp4pp8.yaml", "parallelism.schedule=zb-h1", "parallelism.vpp=1" },
        { "scenarios/70b_256gpu_tp4pp8.yaml", "training.recompute=full",
          "training.recompute_layers=2" },
        { "scenarios/qlora_7b_4090.yaml", "training.model_code=litgpt", "training.recompute=none" },
        { "scenarios/mixtral_8x7b_64gpu.yaml", "training.recompute=full", NULL },
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        check(cases[i][0], &cases[i][1], false);
    check("scenarios/ddp_8gpu.yaml", NULL, true);
}

/* A layer's saved bytes by module sum to what the workload says it saves, at each recompute. */
static void test_modules_layer_sums(void **state)
{
    struct scenario *s = test_load("scenarios/finetune_7b_1gpu.yaml", NULL, NULL);
    struct shard sh;
    struct layer_cost lc;

    (void)state;
    workload_shard(s, &sh);
    workload_layer(s, &sh, false, &lc);
    for (int rc = RC_NONE; rc <= RC_FULL; rc++) {
        double v[MM_COUNT], sum = 0;
        strategy_layer_modules(&lc, (enum recompute)rc, v);
        for (int m = 0; m < MM_COUNT; m++)
            sum += v[m];
        assert_true(test_rel_err(sum, lc.act[rc]) < 1e-12);
        if (rc != RC_FULL)
            assert_true(v[MM_ATTN] > 0 && v[MM_MLP] > 0 && v[MM_NORM] > 0);
    }
    cfg_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modules_layer_sums),
        cmocka_unit_test(test_modules_every_shipped_scenario),
        cmocka_unit_test(test_modules_builder_paths),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

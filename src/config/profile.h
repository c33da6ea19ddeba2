/*
 * profile.h - training-framework profiles: what a training stack (Megatron-Core, torchtitan,
 * DeepSpeed, llm-foundry, ...) sets for its user without being asked, as data in
 * frameworks/NAME.yaml beside hardware/ and workloads/, versioned inside, every value with the
 * source (file, commit, line) it was read from. docs/frameworks.md is generated from them.
 *
 * A scenario selects one with training.framework (and training.framework_version; empty = the
 * profile's `current` version); a runs-file row with its framework / framework_version columns.
 * Layering, lowest first: the schema defaults, the version's defaults, its rules (conditions on
 * the scenario's values, such as torchtitan's reshard rule under pp > 1), the scenario file,
 * --set. A key the scenario gives itself is never touched, so every setting stays overridable;
 * parallelism.framework and training.model_code, which the engine reads, are two of the keys a
 * profile sets. No profile ("other", or training.framework absent) keeps simtrain's defaults.
 *
 * File format (a mapping):
 *   framework: NAME            the file's stem, also the runs-format word
 *   description: TEXT
 *   current: VERSION           the version an empty framework_version selects
 *   calendar:                  the stack's releases and their dates (optional with one version)
 *     source: TEXT
 *     releases: {ID: DATE, ...}
 *   versions:                  a list, oldest first (by date), of mappings:
 *     - name: VERSION
 *       aliases: [WORD, ...]   other spellings accepted for the version (optional)
 *       releases: [ID, ...]    the stack's identifiers of the release read (optional)
 *       released: DATE         date of the release or commit (YYYY-MM-DD or YYYY-MM)
 *       since: {release: ID, date: DATE, source: TEXT}  the first release it describes (optional)
 *       read: TEXT             the repositories and commits the values were read from
 *       note: TEXT             a caveat the report repeats (optional)
 *       inherits: VERSION or NAME/VERSION   start from that version's settings (optional)
 *       defaults:              KEY: {value: V, source: TEXT}
 *       rules:                 a list of {if: {KEY: COND, ...}, set: {KEY: {value: V, source: T}}}
 *       notes: [TEXT, ...]     what the stack does that simtrain does not model (optional)
 * A COND is a value (equal), "!=V", ">N", ">=N", "<N", "<=N", or a list of values (any of
 * them); all conditions of a rule must hold. Keys are scenario keys (docs/yaml-reference.md)
 * of the training, parallelism, ddp, zero, fsdp, nccl and host sections and workload.dropout, but
 * not the layout degrees nor training.framework itself; values are checked at load like the
 * scenario's own. Conditions may read any scenario key.
 *
 * Memory: strings and settings live in the arena of the schema_ctx they were loaded with.
 */
#ifndef SIMTRAIN_CONFIG_PROFILE_H
#define SIMTRAIN_CONFIG_PROFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "config/schema.h"

/* The directory profiles live in, under each data directory. */
#define PROFILE_DIR "frameworks"

/*
 * The names of the profiles found in $SIMTRAIN_DATA/frameworks and the data directory's
 * frameworks/ (sorted, without duplicates), as arena strings. Returns the count.
 */
int profile_names(struct arena *a, const char ***out);

/*
 * Select profile `name` and its version `version` (NULL or "" = the profile's current one)
 * into *fw: load frameworks/NAME.yaml and what the version inherits, and resolve its settings.
 * `version` is read as profile_version.c says (a name, alias, release number, container tag,
 * date, main / latest) and selects the newest version in effect on or before it; fw->reading
 * says how. An unknown name or a version of no such form is an error at `name_at` /
 * `version_at` listing the accepted ones;
 * an error inside a profile file is reported at its place in that file. Returns 0 or -1
 * (errors counted in c).
 */
int profile_select(struct schema_ctx *c, const char *name, const char *version,
                   struct diag_mark name_at, struct diag_mark version_at, struct fw_state *fw);

/* The state of a scenario that runs under no profile ("other"). */
void profile_none(struct fw_state *fw);

/*
 * Bind the selected profile to scenario `s`: the settings whose key `given(key, ctx)` says the
 * scenario sets itself are overridden; the current values of the others are kept as the values
 * to return to when a rule stops applying. Call once, after the scenario's own values are in.
 */
void profile_bind(struct scenario *s, bool (*given)(const char *key, const void *ctx),
                  const void *ctx);

/* The scenario now sets `key` itself (cfg_set): the profile's settings of that key give way. */
void profile_override(struct scenario *s, const char *key);

/*
 * Apply the profile to `s`: every setting not overridden returns to its bound value, then the
 * defaults and the rules whose conditions hold are applied in order (a later one wins); then
 * the derived defaults (cfg_derive_defaults) for the keys neither the scenario nor the profile
 * gave. Safe to call again after any change (sweep, plan): the result depends only on the
 * scenario's own values. Without a profile it only derives.
 */
void profile_apply(struct scenario *s);

/* The setting of `key` that took effect in the last application, or NULL. */
const struct fw_setting *profile_applied(const struct scenario *s, const char *key);

/*
 * Write every profile with its versions and settings (`simtrain frameworks`): plain text, or
 * Markdown for docs/frameworks.md. With `only` (a profile name), that profile alone. Returns 0,
 * or -1 (diagnostics on `diag`) when a profile cannot be loaded.
 */
int profile_write_reference(FILE *out, bool markdown, const char *only, FILE *diag);

#endif

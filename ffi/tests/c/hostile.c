/*
 * Feeds every entry point NULL pointers, invalid UTF-8, malformed JSON, unknown fields, wrong
 * types, made-up and closed handles, and failing callbacks: each must return the expected
 * status code with a message naming the problem, never crash. Run by ffi/tests/c_programs.rs
 * (under AddressSanitizer when the compiler has it).
 *
 * usage: hostile STORE_DIR [CRAFTED_EXPORT]
 *
 * CRAFTED_EXPORT (ffi/tests/data/huge-length.mlx): an export whose item claims a 2^62-byte
 * text, every checksum recomputed; importing it must be MEMLOOP_ERR_CORRUPT, not an abort.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memloop.h"

static int failures = 0;
static int checks = 0;

/* Checks that `status` is `want` and, for errors, that the message mentions `needle`. */
static void expect(int status, int want, const char *needle, const char *what, int line) {
    checks++;
    const char *msg = memloop_last_error();
    if (msg == NULL) {
        printf("FAIL line %d %s: memloop_last_error returned NULL\n", line, what);
        failures++;
        return;
    }
    if (status != want) {
        printf("FAIL line %d %s: status %d, expected %d (%s)\n", line, what, status, want, msg);
        failures++;
    } else if (want != MEMLOOP_OK && (msg[0] == '\0' || (needle && !strstr(msg, needle)))) {
        printf("FAIL line %d %s: message \"%s\" does not mention \"%s\"\n", line, what, msg,
               needle ? needle : "(anything)");
        failures++;
    } else if (want == MEMLOOP_OK && msg[0] != '\0') {
        printf("FAIL line %d %s: success left the message \"%s\"\n", line, what, msg);
        failures++;
    }
}
#define EXPECT(call, want, needle) expect((call), (want), (needle), #call, __LINE__)

static const char BAD_UTF8[] = {'{', '"', 'q', 'u', 'e', 'r', 'y', '"', ':', '"', (char)0xC3,
                                (char)0x28, '"', '}', 0};

/* Draws one fact from the second turn it is given; copies the result when it fits. */
static int64_t fact_extractor(void *user, const char *session, const char *turns, char *out, size_t cap) {
    (void)user;
    (void)session;
    const char *result = strstr(turns, "\"speaker\":\"Ana\"")
        ? "[{\"turn\": 1, \"text\": \"Ana lives in Lisbon\", \"kind\": \"fact\"}]"
        : "[]";
    size_t n = strlen(result);
    if (n <= cap) memcpy(out, result, n);
    return (int64_t)n;
}

/* Returns text that is not the JSON array the engine expects. */
static int64_t garbage_extractor(void *user, const char *session, const char *turns, char *out, size_t cap) {
    (void)user;
    (void)session;
    (void)turns;
    const char *result = "[{\"text\": \"no turn index\"}]";
    size_t n = strlen(result);
    if (n <= cap) memcpy(out, result, n);
    return (int64_t)n;
}

static int32_t failing_rerank(void *user, const char *q, const char *c, float *s, size_t n) {
    (void)user; (void)q; (void)c; (void)s; (void)n;
    memloop_set_callback_error("the reranker service is down");
    return 7;
}

static int32_t nan_rerank(void *user, const char *q, const char *c, float *s, size_t n) {
    (void)user; (void)q; (void)c;
    for (size_t i = 0; i < n; i++) s[i] = 0.0f / 0.0f;
    return 0;
}

/* Closes the very handle whose call is running it: must be refused, not hang. */
static int close_from_callback_status = -1;
static char close_from_callback_message[256];
static int32_t closing_rerank(void *user, const char *q, const char *c, float *s, size_t n) {
    (void)q; (void)c;
    close_from_callback_status = memloop_close(*(memloop_t **)user);
    snprintf(close_from_callback_message, sizeof close_from_callback_message, "%s",
             memloop_last_error());
    for (size_t i = 0; i < n; i++) s[i] = (float)(n - i);
    return 0;
}

static int64_t negative_counter(void *user, const char *text) {
    (void)user; (void)text;
    return -1;
}

static int64_t garbage_summary(void *user, const char *text, char *out, size_t cap) {
    (void)user; (void)text;
    const char bad[] = "not json";
    if (cap >= sizeof bad - 1) memcpy(out, bad, sizeof bad - 1);
    return (int64_t)(sizeof bad - 1);
}

static int64_t greedy_refiner(void *user, const char *q, const char *h, uint32_t r, char *out,
                              size_t cap) {
    (void)user; (void)q; (void)h; (void)r; (void)out;
    return (int64_t)cap + 1; /* always asks for more */
}

int main(int argc, char **argv) {
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: %s STORE_DIR [CRAFTED_EXPORT]\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    const char *opts = "{\"hashing_embedder\": 32, \"clock\": \"manual\", \"start_ms\": 1000}";
    memloop_t *mem = NULL;
    char *json = NULL;
    uint64_t id = 0, ids[4];
    size_t count = 0;
    const int INVALID = MEMLOOP_ERR_INVALID_ARGUMENT;

    /* open: NULLs, garbage, unknown fields, wrong types, bad values */
    EXPECT(memloop_open(NULL, opts, NULL, &mem), INVALID, "path is NULL");
    EXPECT(memloop_open(dir, opts, NULL, NULL), INVALID, "out is NULL");
    EXPECT(memloop_open(BAD_UTF8, opts, NULL, &mem), INVALID, "UTF-8");
    EXPECT(memloop_open(dir, BAD_UTF8, NULL, &mem), INVALID, "UTF-8");
    EXPECT(memloop_open(dir, "{not json", NULL, &mem), INVALID, "options_json");
    EXPECT(memloop_open(dir, "{\"colour\": 1}", NULL, &mem), INVALID, "unknown field `colour`");
    EXPECT(memloop_open(dir, "{\"sync\": \"yes\"}", NULL, &mem), INVALID, "invalid type");
    EXPECT(memloop_open(dir, "{\"clock\": \"lunar\"}", NULL, &mem), INVALID, "lunar");
    EXPECT(memloop_open(dir, "{\"hashing_embedder\": 32, \"index_vectors\": \"int4\"}", NULL, &mem), INVALID,
           "unknown vector encoding");
    EXPECT(memloop_open(dir, "{\"hashing_embedder\": 0}", NULL, &mem), INVALID, "dimension");
    EXPECT(memloop_open(dir, "{\"device\": \"tpu\"}", NULL, &mem), INVALID, "cuda:N");
    /* The tests' library has no CUDA: a GPU request is refused up front. */
    EXPECT(memloop_open(dir, "{\"device\": \"cuda\"}", NULL, &mem), INVALID, "without CUDA");
    EXPECT(memloop_open(dir, "{\"hashing_embedder\": 8, \"max_text_bytes\": 0}", NULL, &mem), INVALID,
           "max_text_bytes");
    EXPECT(memloop_open(dir, "[]", NULL, &mem), INVALID, "options_json");
    EXPECT(memloop_open(dir, "{\"model\": \"/nonexistent/model\"}", NULL, &mem), MEMLOOP_ERR_EMBED,
           "/nonexistent/model");
    EXPECT(memloop_open(dir, "{\"hashing_embedder\": 8, \"reranker_model\": \"/nonexistent/ce\"}", NULL, &mem),
           MEMLOOP_ERR_EMBED, "/nonexistent/ce");
    if (mem != NULL) { printf("FAIL: a failed open wrote a handle\n"); failures++; }

    /* every call on NULL, made-up handles */
    memloop_t *fake = (memloop_t *)(uintptr_t)0xdeadbeef;
    memloop_t *handles[] = {NULL, fake};
    for (int h = 0; h < 2; h++) {
        memloop_t *x = handles[h];
        const char *needle = h == 0 ? "handle is NULL" : "not an open memloop store";
        EXPECT(memloop_remember(x, "{\"text\": \"a\"}", &id), INVALID, needle);
        EXPECT(memloop_remember_batch(x, "[]", ids, 4, &count), INVALID, needle);
        EXPECT(memloop_get(x, 1, &json), INVALID, needle);
        EXPECT(memloop_forget(x, 1), INVALID, needle);
        EXPECT(memloop_forget_scope(x, "{\"user\": \"a\"}", &json), INVALID, needle);
        EXPECT(memloop_recall(x, "{\"query\": \"a\"}", &json), INVALID, needle);
        EXPECT(memloop_context(x, "{\"query\": \"a\", \"budget\": 10}", &json), INVALID, needle);
        EXPECT(memloop_feedback(x, 1, 3), INVALID, needle);
        EXPECT(memloop_record_task(x, "{\"request\": \"a\", \"success\": true}", &json), INVALID, needle);
        EXPECT(memloop_observe(x, "f.rs", "modified", NULL, &id), INVALID, needle);
        EXPECT(memloop_sweep(x, &json), INVALID, needle);
        EXPECT(memloop_stats(x, &json), INVALID, needle);
        EXPECT(memloop_checkpoint(x), INVALID, needle);
        EXPECT(memloop_export(x, "/tmp/x", &id), INVALID, needle);
        EXPECT(memloop_import(x, "/tmp/x", &json), INVALID, needle);
        EXPECT(memloop_set_time(x, 5000), INVALID, needle);
        EXPECT(memloop_close(x), INVALID, needle);
    }
    memloop_free_string(NULL); /* allowed */

    EXPECT(memloop_open(dir, opts, NULL, &mem), MEMLOOP_OK, NULL);

    /* remember */
    EXPECT(memloop_remember(mem, NULL, &id), INVALID, "item_json is NULL");
    EXPECT(memloop_remember(mem, "{\"text\": \"a\"}", NULL), INVALID, "out_id is NULL");
    EXPECT(memloop_remember(mem, BAD_UTF8, &id), INVALID, "item_json is not valid UTF-8");
    EXPECT(memloop_remember(mem, "{\"text\": ", &id), INVALID, "item_json");
    EXPECT(memloop_remember(mem, "{\"text\": \"a\", \"mood\": 1}", &id), INVALID, "unknown field `mood`");
    EXPECT(memloop_remember(mem, "{\"text\": 42}", &id), INVALID, "invalid type");
    EXPECT(memloop_remember(mem, "{\"text\": \"a\", \"kind\": \"poem\"}", &id), INVALID, "poem");
    EXPECT(memloop_remember(mem, "{\"text\": \"   \"}", &id), INVALID, "empty");
    EXPECT(memloop_remember(mem, "{\"text\": \"a\", \"importance\": 7}", &id), INVALID, "importance");
    EXPECT(memloop_remember(mem, "\"just a string\"", &id), INVALID, "item_json");
    EXPECT(memloop_remember(mem, "{\"text\": \"the cache lives in redis\", \"kind\": \"fact\"}", &id),
           MEMLOOP_OK, NULL);

    /* remember_batch */
    EXPECT(memloop_remember_batch(mem, "[{\"text\": \"x\"}]", NULL, 4, &count), INVALID, "out_ids is NULL");
    EXPECT(memloop_remember_batch(mem, "[{\"text\": \"x\"}]", ids, 4, NULL), INVALID, "out_count is NULL");
    EXPECT(memloop_remember_batch(mem, "{\"text\": \"x\"}", ids, 4, &count), INVALID, "items_json");
    EXPECT(memloop_remember_batch(mem, "[{\"text\": \"x\"}, {\"text\": \"y\"}]", ids, 1, &count), INVALID,
           "holds 1");
    EXPECT(memloop_remember_batch(mem, "[{\"text\": \"ok\"}, {\"text\": \"\"}]", ids, 4, &count), INVALID,
           "empty");
    EXPECT(memloop_remember_batch(mem, "[{\"text\": \"one\"}, {\"text\": \"two\"}]", ids, 4, &count),
           MEMLOOP_OK, NULL);
    if (count != 2) { printf("FAIL: batch count %zu\n", count); failures++; }

    /* get / forget / feedback */
    EXPECT(memloop_get(mem, id, NULL), INVALID, "out_json is NULL");
    EXPECT(memloop_get(mem, 999999, &json), MEMLOOP_OK, NULL);
    if (!json || strcmp(json, "null") != 0) { printf("FAIL: get of a missing id: %s\n", json); failures++; }
    memloop_free_string(json); json = NULL;
    EXPECT(memloop_forget(mem, 999999), MEMLOOP_ERR_NOT_FOUND, "999999");
    EXPECT(memloop_feedback(mem, id, 0), INVALID, "level 0");
    EXPECT(memloop_feedback(mem, id, 6), INVALID, "level 6");
    EXPECT(memloop_feedback(mem, id, -300), INVALID, "level -300");
    EXPECT(memloop_feedback(mem, 999999, 3), MEMLOOP_ERR_NOT_FOUND, "999999");

    /* recall / context */
    EXPECT(memloop_recall(mem, NULL, &json), INVALID, "query_json is NULL");
    EXPECT(memloop_recall(mem, "{\"query\": \"cache\"}", NULL), INVALID, "out_json is NULL");
    EXPECT(memloop_recall(mem, BAD_UTF8, &json), INVALID, "UTF-8");
    EXPECT(memloop_recall(mem, "{\"query\": \"cache\", \"k\": -1}", &json), INVALID, "query_json");
    EXPECT(memloop_recall(mem, "{\"query\": \"cache\", \"strategy\": \"magic\"}", &json), INVALID, "magic");
    EXPECT(memloop_recall(mem, "{\"query\": \"cache\", \"kinds\": [\"poem\"]}", &json), INVALID, "poem");
    EXPECT(memloop_recall(mem, "{\"text\": \"cache\"}", &json), INVALID, "missing field `query`");
    EXPECT(memloop_recall(mem, "{\"query\": \"cache\", \"text\": \"x\"}", &json), INVALID, "unknown field `text`");
    /* the budget defaults to 500, as on every door; a mode that is none is refused */
    EXPECT(memloop_context(mem, "{\"query\": \"cache\"}", &json), MEMLOOP_OK, NULL);
    memloop_free_string(json); json = NULL;
    EXPECT(memloop_context(mem, "{\"query\": \"cache\", \"mode\": \"poetry\"}", &json), INVALID, "poetry");
    EXPECT(memloop_context(mem, "{\"query\": \"cache\", \"documents\": true}", &json), INVALID,
           "unknown field `documents`");
    EXPECT(memloop_context(mem, "{\"query\": \"cache\", \"budget\": 10, \"key_share\": 2}", &json), INVALID,
           "key share");
    EXPECT(memloop_recall(mem, "{\"query\": \"cache\", \"k\": 3}", &json), MEMLOOP_OK, NULL);
    memloop_free_string(json); json = NULL;

    /* tasks, observe */
    EXPECT(memloop_record_task(mem, "{\"request\": \"deploy\"}", &json), INVALID, "success");
    EXPECT(memloop_record_task(mem, "{\"request\": \"deploy\", \"success\": 1}", &json), INVALID, "invalid type");
    EXPECT(memloop_record_task(mem, "{\"request\": \"deploy\", \"success\": true}", NULL), INVALID, "out_json");
    EXPECT(memloop_observe(mem, NULL, "modified", NULL, &id), INVALID, "subject is NULL");
    EXPECT(memloop_observe(mem, "f.rs", NULL, NULL, &id), INVALID, "event is NULL");
    EXPECT(memloop_observe(mem, "f.rs", "explode", NULL, &id), INVALID, "explode");
    EXPECT(memloop_observe(mem, "f.rs", "modified", BAD_UTF8, &id), INVALID, "content is not valid UTF-8");
    EXPECT(memloop_observe(mem, "  ", "modified", NULL, &id), INVALID, "subject");
    EXPECT(memloop_observe(mem, "f.rs", "modified", NULL, NULL), INVALID, "out_id is NULL");

    /* sweep, stats, export, import, clock */
    EXPECT(memloop_sweep(mem, NULL), INVALID, "out_json is NULL");
    EXPECT(memloop_stats(mem, NULL), INVALID, "out_json is NULL");
    EXPECT(memloop_export(mem, NULL, &id), INVALID, "path is NULL");
    EXPECT(memloop_export(mem, "/nonexistent-dir/x.mlx", &id), MEMLOOP_ERR_IO, "/nonexistent-dir");
    EXPECT(memloop_import(mem, "/nonexistent-dir/x.mlx", &json), MEMLOOP_ERR_IO, "/nonexistent-dir");
    EXPECT(memloop_import(mem, BAD_UTF8, &json), INVALID, "UTF-8");
    if (argc == 3) {
        EXPECT(memloop_import(mem, argv[2], &json), MEMLOOP_ERR_CORRUPT, "record 0");
        EXPECT(memloop_stats(mem, &json), MEMLOOP_OK, NULL); /* alive, and still answering */
        memloop_free_string(json); json = NULL;
    }
    EXPECT(memloop_set_time(mem, 500), INVALID, "before");
    EXPECT(memloop_set_time(mem, 2000), MEMLOOP_OK, NULL);
    EXPECT(memloop_close(mem), MEMLOOP_OK, NULL);

    /* a closed handle is an error, not a crash */
    EXPECT(memloop_stats(mem, &json), INVALID, "not an open memloop store");
    EXPECT(memloop_close(mem), INVALID, "not an open memloop store");

    /* failing callbacks */
    memloop_hooks_t hooks = {0};
    hooks.rerank = failing_rerank;
    EXPECT(memloop_open(dir, "{\"hashing_embedder\": 8, \"reranker_model\": \"/some/ce\"}", &hooks, &mem),
           INVALID, "reranker_model");
    EXPECT(memloop_open(dir, opts, &hooks, &mem), MEMLOOP_OK, NULL);
    EXPECT(memloop_recall(mem, "{\"query\": \"cache\", \"strategy\": \"rerank\"}", &json), MEMLOOP_ERR_CALLBACK,
           "the reranker service is down");
    EXPECT(memloop_recall(mem, "{\"query\": \"cache\"}", &json), MEMLOOP_OK, NULL); /* single: no rerank */
    memloop_free_string(json); json = NULL;
    EXPECT(memloop_close(mem), MEMLOOP_OK, NULL);

    /* scopes: a user's memories are theirs alone, and erasing the user leaves none */
    EXPECT(memloop_open(dir, opts, NULL, &mem), MEMLOOP_OK, NULL);
    EXPECT(memloop_remember(mem, "{\"text\": \"ana likes tea\", \"user\": \"ana\"}", &id), MEMLOOP_OK, NULL);
    EXPECT(memloop_remember(mem, "{\"text\": \"ana likes tea\", \"user\": \"bo\"}", &ids[0]), MEMLOOP_OK, NULL);
    checks++;
    if (id == ids[0]) { printf("FAIL: two users' equal texts merged\n"); failures++; }
    EXPECT(memloop_remember(mem, "{\"text\": \"x\", \"user\": \"\"}", &id), INVALID, "user is empty");
    EXPECT(memloop_forget_scope(mem, "{}", &json), INVALID, "needs a user");
    EXPECT(memloop_forget_scope(mem, "{\"planet\": \"mars\"}", &json), INVALID, "unknown field `planet`");
    EXPECT(memloop_forget_scope(mem, NULL, &json), INVALID, "scope_json");
    EXPECT(memloop_forget_scope(mem, "{\"user\": \"ana\"}", NULL), INVALID, "out_json");
    EXPECT(memloop_sweep_scope(mem, "{}", &json), INVALID, "needs a user");
    EXPECT(memloop_sweep_scope(mem, NULL, &json), INVALID, "scope_json");
    EXPECT(memloop_sweep_scope(mem, "{\"user\": \"ana\"}", &json), MEMLOOP_OK, NULL);
    checks++;
    if (!json || !strstr(json, "\"forgotten\":0")) { printf("FAIL: sweep_scope report %s\n", json); failures++; }
    memloop_free_string(json); json = NULL;
    EXPECT(memloop_forget_scope(mem, "{\"user\": \"ana\"}", &json), MEMLOOP_OK, NULL);
    checks++;
    if (!json || !strstr(json, "\"memories\":1")) { printf("FAIL: forget_scope report %s\n", json); failures++; }
    memloop_free_string(json); json = NULL;
    EXPECT(memloop_recall(mem, "{\"query\": \"tea\", \"user\": \"ana\"}", &json), MEMLOOP_OK, NULL);
    checks++;
    if (!json || strcmp(json, "{\"hits\":[]}") != 0) { printf("FAIL: ana's memories survived: %s\n", json); failures++; }
    memloop_free_string(json); json = NULL;
    EXPECT(memloop_recall(mem, "{\"query\": \"tea\", \"user\": \"bo\", \"k\": 1}", &json), MEMLOOP_OK, NULL);
    checks++;
    if (!json || !strstr(json, "\"user\":\"bo\"")) { printf("FAIL: bo's memory is gone: %s\n", json); failures++; }
    memloop_free_string(json); json = NULL;
    EXPECT(memloop_close(mem), MEMLOOP_OK, NULL);

    hooks.rerank = closing_rerank;
    hooks.user_data = &mem;
    EXPECT(memloop_open(dir, opts, &hooks, &mem), MEMLOOP_OK, NULL);
    EXPECT(memloop_recall(mem, "{\"query\": \"cache\", \"strategy\": \"rerank\"}", &json), MEMLOOP_OK, NULL);
    memloop_free_string(json); json = NULL;
    checks++;
    if (close_from_callback_status != MEMLOOP_ERR_INVALID_ARGUMENT || !strstr(close_from_callback_message, "inside a callback")) {
        printf("FAIL: memloop_close from a callback: status %d (%s)\n", close_from_callback_status,
               close_from_callback_message);
        failures++;
    }
    EXPECT(memloop_close(mem), MEMLOOP_OK, NULL); /* still open, and closes normally after */
    hooks.user_data = NULL;

    hooks.rerank = nan_rerank;
    hooks.count_tokens = negative_counter;
    hooks.summarize = garbage_summary;
    hooks.refine = greedy_refiner;
    EXPECT(memloop_open(dir, opts, &hooks, &mem), MEMLOOP_OK, NULL);
    EXPECT(memloop_recall(mem, "{\"query\": \"cache\", \"strategy\": \"rerank\"}", &json), MEMLOOP_ERR_CALLBACK,
           "not a finite number");
    EXPECT(memloop_context(mem, "{\"query\": \"cache\", \"budget\": 50}", &json), MEMLOOP_ERR_CALLBACK,
           "token counter");
    EXPECT(memloop_record_task(mem, "{\"request\": \"deploy\", \"success\": true}", &json), MEMLOOP_ERR_CALLBACK,
           "summarizer");
    EXPECT(memloop_recall(mem, "{\"query\": \"cache\", \"strategy\": \"iterative\"}", &json),
           MEMLOOP_ERR_CALLBACK, "refiner");
    EXPECT(memloop_stats(mem, &json), MEMLOOP_OK, NULL); /* the handle still works */
    memloop_free_string(json);
    EXPECT(memloop_close(mem), MEMLOOP_OK, NULL);

    /* An int8 index: recorded in the store, kept when the next open does not name one. */
    char int8_dir[512];
    snprintf(int8_dir, sizeof int8_dir, "%s/int8", dir);
    EXPECT(memloop_open(int8_dir, "{\"hashing_embedder\": 32, \"index_vectors\": \"int8\"}", NULL, &mem), MEMLOOP_OK, NULL);
    EXPECT(memloop_remember(mem, "{\"text\": \"the kettle is in the second cupboard\"}", &id), MEMLOOP_OK, NULL);
    EXPECT(memloop_close(mem), MEMLOOP_OK, NULL);
    EXPECT(memloop_open(int8_dir, "{\"hashing_embedder\": 32}", NULL, &mem), MEMLOOP_OK, NULL);
    EXPECT(memloop_recall(mem, "{\"query\": \"the kettle is in the second cupboard\", \"k\": 1}", &json), MEMLOOP_OK, NULL);
    checks++;
    if (!json || !strstr(json, "second cupboard")) { printf("FAIL: int8 recall gave %s\n", json); failures++; }
    memloop_free_string(json); json = NULL;
    EXPECT(memloop_close(mem), MEMLOOP_OK, NULL);

    /* Per-user capacity: each user keeps their best memory only. */
    char cap_dir[512];
    snprintf(cap_dir, sizeof cap_dir, "%s/capacity", dir);
    EXPECT(memloop_open(cap_dir, "{\"hashing_embedder\": 32, \"capacity_per_user\": 1}", NULL, &mem), MEMLOOP_OK, NULL);
    EXPECT(memloop_remember(mem, "{\"text\": \"ana likes tea\", \"user\": \"ana\", \"importance\": 0.9}", &id), MEMLOOP_OK, NULL);
    EXPECT(memloop_remember(mem, "{\"text\": \"ana owns a bike\", \"user\": \"ana\", \"importance\": 0.1}", &id), MEMLOOP_OK, NULL);
    EXPECT(memloop_remember(mem, "{\"text\": \"bo likes jazz\", \"user\": \"bo\"}", &id), MEMLOOP_OK, NULL);
    EXPECT(memloop_stats(mem, &json), MEMLOOP_OK, NULL);
    checks++;
    if (!json || !strstr(json, "\"memories\":2")) { printf("FAIL: capacity_per_user left %s\n", json); failures++; }
    memloop_free_string(json); json = NULL;
    EXPECT(memloop_close(mem), MEMLOOP_OK, NULL);

    /* Conversations: turns, a fact from the extract hook, hostile requests. */
    memloop_hooks_t talk = {0};
    talk.extract = fact_extractor;
    char talk_dir[512];
    snprintf(talk_dir, sizeof talk_dir, "%s/talk", dir);
    EXPECT(memloop_open(talk_dir, opts, &talk, &mem), MEMLOOP_OK, NULL);
    const char *turns = "{\"session\": \"s1\", \"user\": \"ana\", \"turns\": ["
                        "{\"speaker\": \"Bo\", \"text\": \"where do you live?\", \"time\": 1000},"
                        "{\"speaker\": \"Ana\", \"text\": \"I live in Lisbon.\", \"time\": 2000}]}";
    EXPECT(memloop_remember_conversation(mem, turns, &json), MEMLOOP_OK, NULL);
    checks++;
    if (!json || !strstr(json, "\"first_turn\":0") || !strstr(json, "\"extracted\":[{")) {
        printf("FAIL: conversation report %s\n", json);
        failures++;
    }
    memloop_free_string(json); json = NULL;
    EXPECT(memloop_remember_conversation(mem, turns, &json), MEMLOOP_OK, NULL);
    checks++;
    if (!json || !strstr(json, "\"first_turn\":2")) { printf("FAIL: numbering %s\n", json); failures++; }
    memloop_free_string(json); json = NULL;
    EXPECT(memloop_remember_conversation(mem, "{\"session\": \"s\", \"turns\": []}", &json), INVALID,
           "at least one turn");
    EXPECT(memloop_remember_conversation(mem, "{\"session\": \"s\", \"turns\": [{\"speaker\": \"a\"}]}", &json),
           INVALID, "missing field");
    EXPECT(memloop_remember_conversation(mem, "{\"session\": \"\", \"turns\": [{\"speaker\": \"a\", \"text\": \"b\", \"time\": 1}]}",
                                         &json), INVALID, "session is empty");
    EXPECT(memloop_remember_conversation(mem, NULL, &json), INVALID, "request_json");
    EXPECT(memloop_close(mem), MEMLOOP_OK, NULL);
    talk.extract = garbage_extractor;
    EXPECT(memloop_open(talk_dir, opts, &talk, &mem), MEMLOOP_OK, NULL);
    EXPECT(memloop_remember_conversation(mem, turns, &json), MEMLOOP_ERR_CALLBACK, "no \"turn\" index");
    EXPECT(memloop_recall(mem, "{\"query\": \"lisbon\", \"kinds\": [\"turn\"], \"k\": 10}", &json), MEMLOOP_OK, NULL);
    checks++;
    {
        /* Four turns from the two good calls; the refused call stored none. */
        int n = 0;
        for (const char *p = json; p && (p = strstr(p, "\"kind\":\"turn\"")); p++) n++;
        if (n != 4 * 2) { printf("FAIL: %d turn mentions after a refused call: %s\n", n, json); failures++; }
    }
    memloop_free_string(json); json = NULL;
    EXPECT(memloop_close(mem), MEMLOOP_OK, NULL);

    printf("%d checks, %d failures\n", checks, failures);
    return failures == 0 ? 0 : 1;
}

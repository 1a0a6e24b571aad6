/*
 * memloop from C: open a store, remember, recall, assemble a context, give feedback, close.
 *
 * Build (after `cargo build --release -p memloop-ffi`):
 *   cc -Iffi/include ffi/examples/basic.c -Ltarget/release -lmemloop_ffi -o basic
 *   LD_LIBRARY_PATH=target/release ./basic /tmp/basic-store
 * It uses the default model (scripts/fetch-model.sh puts it in ~/.cache/memloop/models).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memloop.h"

/* Prints the failure of `call` and exits. */
static void check(int status, const char *call) {
    if (status != MEMLOOP_OK) {
        fprintf(stderr, "%s failed (status %d): %s\n", call, status, memloop_last_error());
        exit(1);
    }
}

/* The first "id" in a JSON text (enough for this example; use a JSON library in real code). */
static uint64_t first_id(const char *json) {
    const char *p = strstr(json, "\"id\":");
    return p ? strtoull(p + 5, NULL, 10) : 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s STORE_DIR\n", argv[0]);
        return 2;
    }
    if (memloop_abi_version() != MEMLOOP_ABI_VERSION) {
        fprintf(stderr, "library ABI %u, header ABI %d\n", memloop_abi_version(), MEMLOOP_ABI_VERSION);
        return 1;
    }
    printf("memloop %s\n", memloop_version());

    memloop_t *mem = NULL;
    check(memloop_open(argv[1], "{\"clock\": \"manual\", \"start_ms\": 1700000000000}", NULL, &mem),
          "memloop_open");

    const char *facts[] = {
        "{\"text\": \"The staging database is PostgreSQL 16 on port 5433.\", \"kind\": \"fact\"}",
        "{\"text\": \"Deployments go out every Tuesday after the standup.\", \"kind\": \"fact\"}",
        "{\"text\": \"Alice prefers answers with code examples in Rust.\", \"kind\": \"fact\", "
        "\"tags\": [\"preference\"]}",
    };
    for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++) {
        uint64_t id = 0;
        check(memloop_remember(mem, facts[i], &id), "memloop_remember");
        printf("remembered #%" PRIu64 "\n", id);
    }

    char *hits = NULL;
    check(memloop_recall(mem, "{\"query\": \"which port does the staging db use?\", \"k\": 2}", &hits),
          "memloop_recall");
    printf("recall: %s\n", hits);
    uint64_t best = first_id(hits);
    memloop_free_string(hits);

    char *context = NULL;
    check(memloop_context(mem, "{\"query\": \"how do we deploy to staging?\", \"budget\": 48}", &context),
          "memloop_context");
    printf("context: %s\n", context);
    memloop_free_string(context);

    check(memloop_feedback(mem, best, 5), "memloop_feedback");
    printf("feedback 5 on #%" PRIu64 "\n", best);

    check(memloop_close(mem), "memloop_close");
    printf("closed\n");
    return 0;
}

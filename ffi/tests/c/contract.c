/*
 * The cross-door contract (contract/cases.json) through the C ABI: reads requests, one a line
 * as "OP<TAB>JSON" (OP: remember, recall or context, or call:NAME for any operation of the
 * registry through memloop_call), runs each on a store opened with the default model (or with
 * OPTIONS_JSON), and writes one line for each: "STATUS<TAB>OUTPUT" (the id for remember, the
 * JSON answer otherwise, the error message on failure). ffi/tests/c_programs.rs feeds it the
 * table and holds the answers to it. Run under AddressSanitizer when the compiler has it.
 *
 * usage: contract STORE_DIR [OPTIONS_JSON] < requests
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memloop.h"

int main(int argc, char **argv) {
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: contract STORE_DIR [OPTIONS_JSON] < requests\n");
        return 2;
    }
    memloop_t *mem = NULL;
    if (memloop_open(argv[1], argc == 3 ? argv[2] : NULL, NULL, &mem) != MEMLOOP_OK) {
        fprintf(stderr, "open: %s\n", memloop_last_error());
        return 1;
    }
    static char line[1 << 16];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = '\0';
        char *tab = strchr(line, '\t');
        if (tab == NULL) {
            fprintf(stderr, "no tab in \"%s\"\n", line);
            return 2;
        }
        *tab = '\0';
        const char *op = line, *request = tab + 1;
        char *json = NULL;
        int32_t status;
        if (strncmp(op, "call:", 5) == 0) {
            status = memloop_call(mem, op + 5, request, &json);
        } else if (strcmp(op, "remember") == 0) {
            uint64_t id = 0;
            status = memloop_remember(mem, request, &id);
            if (status == MEMLOOP_OK) {
                printf("%d\t%" PRIu64 "\n", status, id);
                continue;
            }
        } else if (strcmp(op, "recall") == 0) {
            status = memloop_recall(mem, request, &json);
        } else if (strcmp(op, "context") == 0) {
            status = memloop_context(mem, request, &json);
        } else if (strcmp(op, "open") == 0) {
            /* A fresh store beside the table's, with the case's options. */
            char dir[4096];
            snprintf(dir, sizeof dir, "%s-opened", argv[1]);
            memloop_t *opened = NULL;
            status = memloop_open(dir, request, NULL, &opened);
            if (status == MEMLOOP_OK) {
                memloop_close(opened);
                printf("%d\t[]\n", status);
                continue;
            }
        } else {
            fprintf(stderr, "unknown op \"%s\"\n", op);
            return 2;
        }
        printf("%d\t%s\n", status, status == MEMLOOP_OK ? json : memloop_last_error());
        memloop_free_string(json);
    }
    if (memloop_close(mem) != MEMLOOP_OK) {
        fprintf(stderr, "close: %s\n", memloop_last_error());
        return 1;
    }
    return 0;
}

/*
 * An encrypted store through the C ABI: `"key_file"` in the options, MEMLOOP_ERR_KEY without
 * it, and an erasure whose answer carries the signed receipt. Run by ffi/tests/c_programs.rs.
 *
 * usage: encryption STORE_DIR KEY_FILE
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "memloop.h"

static int failures = 0;

#define CHECK(cond, what)                                                    \
    do {                                                                     \
        if (!(cond)) {                                                       \
            printf("FAIL line %d %s (%s)\n", __LINE__, what, memloop_last_error()); \
            failures++;                                                      \
        }                                                                    \
    } while (0)

/* `text` as the inside of a JSON string: a Windows path's backslashes (and any quote) escaped. */
static void json_escape(const char *text, char *out, size_t size) {
    size_t n = 0;
    for (; *text && n + 2 < size; text++) {
        if (*text == '\\' || *text == '"')
            out[n++] = '\\';
        out[n++] = *text;
    }
    out[n] = '\0';
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: encryption STORE_DIR KEY_FILE\n");
        return 2;
    }
    char key[2048], options[4096];
    json_escape(argv[2], key, sizeof key);
    snprintf(options, sizeof options, "{\"hashing_embedder\": 64, \"key_file\": \"%s\"}", key);
    memloop_t *m = NULL;
    CHECK(memloop_open(argv[1], options, NULL, &m) == MEMLOOP_OK, "open with a key file");
    uint64_t id = 0;
    CHECK(memloop_remember(m, "{\"text\": \"Ana's locker code is 7731\", \"user\": \"ana\"}", &id) ==
              MEMLOOP_OK, "remember for ana");
    CHECK(memloop_remember(m, "{\"text\": \"Bob prefers the window seat\", \"user\": \"bob\"}", &id) ==
              MEMLOOP_OK, "remember for bob");
    CHECK(memloop_close(m) == MEMLOOP_OK, "close");

    memloop_t *none = NULL;
    int32_t status = memloop_open(argv[1], "{\"hashing_embedder\": 64}", NULL, &none);
    CHECK(status == MEMLOOP_ERR_KEY, "open without the key is MEMLOOP_ERR_KEY");
    CHECK(strstr(memloop_last_error(), "encrypted") != NULL, "the message says why");
    CHECK(none == NULL, "no handle without the key");

    CHECK(memloop_open(argv[1], options, NULL, &m) == MEMLOOP_OK, "reopen with the key");
    char *out = NULL;
    CHECK(memloop_forget_scope(m, "{\"user\": \"ana\"}", &out) == MEMLOOP_OK, "erase ana");
    CHECK(out != NULL && strstr(out, "\"destroyed_key\":\"") != NULL, "the receipt names the destroyed key");
    CHECK(out != NULL && strstr(out, "\"receipt_line\"") != NULL, "and carries its signed line");
    if (out) printf("erased: %s\n", out);
    memloop_free_string(out);
    CHECK(memloop_close(m) == MEMLOOP_OK, "close again");
    printf("encryption: %d failures\n", failures);
    return failures == 0 ? 0 : 1;
}

/* JSON text helpers (roboest/config.h): locating a key path in the source text (cJSON keeps no positions),
 * formatting key paths, finding where a text stops being JSON, closest-name suggestions, cJSON builders. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roboest/config.h"

typedef struct scan {
    const char *s;
    size_t len, pos;
} scan;

static int peek(const scan *sc) { return sc->pos < sc->len ? (unsigned char)sc->s[sc->pos] : -1; }

static void skip_ws(scan *sc)
{
    while (sc->pos < sc->len) {
        char c = sc->s[sc->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            return;
        sc->pos++;
    }
}

static int hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Four hex digits at sc->pos; -1 if malformed. Advances past what it read. */
static long read_hex4(scan *sc)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hex_value(peek(sc));
        if (h < 0)
            return -1;
        v = v * 16 + h;
        sc->pos++;
    }
    return v;
}

/* Decode one character of a string body (sc->pos after the opening quote, not at the closing one)
 * into UTF-8 bytes; returns the byte count, 0 at a malformed escape or the end of the text. */
static size_t decode_char(scan *sc, unsigned char out[4])
{
    int c = peek(sc);
    if (c < 0)
        return 0;
    sc->pos++;
    if (c != '\\') {
        out[0] = (unsigned char)c;
        return 1;
    }
    int e = peek(sc);
    sc->pos++;
    const char *simple = "\"\\/bfnrt", *mapped = "\"\\/\b\f\n\r\t";
    const char *hit = e > 0 ? strchr(simple, e) : NULL;
    if (hit) {
        out[0] = (unsigned char)mapped[hit - simple];
        return 1;
    }
    if (e != 'u')
        return 0;
    long cp = read_hex4(sc);
    if (cp < 0)
        return 0;
    if (cp >= 0xD800 && cp <= 0xDBFF && peek(sc) == '\\' && sc->pos + 1 < sc->len && sc->s[sc->pos + 1] == 'u') {
        sc->pos += 2;
        long lo = read_hex4(sc);
        if (lo < 0xDC00 || lo > 0xDFFF)
            return 0;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | (cp >> 6));
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | (cp >> 12));
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | (cp >> 18));
    out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* At an opening quote: skip the string, telling whether its decoded text equals `target`
 * (target NULL: just skip). Returns false if the string is not terminated. */
static bool scan_string(scan *sc, const char *target, bool *equal)
{
    size_t matched = 0, target_len = target ? strlen(target) : 0;
    bool same = target != NULL;
    sc->pos++;
    while (sc->pos < sc->len && sc->s[sc->pos] != '"') {
        unsigned char bytes[4];
        size_t n = decode_char(sc, bytes);
        if (n == 0) {
            same = false;
            continue;
        }
        if (same && (matched + n > target_len || memcmp(target + matched, bytes, n) != 0))
            same = false;
        matched += n;
    }
    if (sc->pos >= sc->len)
        return false;
    sc->pos++;
    if (equal)
        *equal = same && matched == target_len;
    return true;
}

/* Skip one value (iteratively, so deep nesting costs no stack). */
static bool skip_value(scan *sc)
{
    size_t depth = 0;
    do {
        skip_ws(sc);
        int c = peek(sc);
        if (c < 0)
            return false;
        if (c == '"') {
            if (!scan_string(sc, NULL, NULL))
                return false;
        } else if (c == '{' || c == '[') {
            depth++;
            sc->pos++;
        } else if (c == '}' || c == ']') {
            if (depth == 0)
                return false;
            depth--;
            sc->pos++;
        } else if (c == ',' || c == ':') {
            if (depth == 0)
                return false;
            sc->pos++;
        } else {
            while (sc->pos < sc->len && !strchr(" \t\r\n,:]}[{\"", sc->s[sc->pos]))
                sc->pos++;
        }
    } while (depth > 0);
    return true;
}

/* Past white space and then `ch`, if that is what comes next. */
static bool eat(scan *sc, int ch)
{
    skip_ws(sc);
    if (peek(sc) != ch)
        return false;
    sc->pos++;
    return true;
}

/* Past the value at sc->pos and the ',' that must follow it: false at the container's end or bad text. */
static bool skip_to_next(scan *sc) { return skip_value(sc) && eat(sc, ','); }

/* Inside an object (sc->pos after '{'): find the member `key` (its occurrence-th appearance); on
 * success sc->pos is at the member's value and *key_pos at its key. */
static bool find_member(scan *sc, const char *key, size_t occurrence, size_t *key_pos)
{
    size_t seen = 0;
    for (;;) {
        skip_ws(sc);
        if (peek(sc) != '"')
            return false;
        size_t at = sc->pos;
        bool equal = false;
        if (!scan_string(sc, key, &equal) || !eat(sc, ':'))
            return false;
        skip_ws(sc);
        if (equal && seen++ == occurrence) {
            *key_pos = at;
            return true;
        }
        if (!skip_to_next(sc))
            return false;
    }
}

/* Inside an array (sc->pos after '['): move to element `index`. */
static bool find_element(scan *sc, size_t index)
{
    for (size_t i = 0;; i++) {
        skip_ws(sc);
        if (peek(sc) < 0 || peek(sc) == ']')
            return false;
        if (i == index)
            return true;
        if (!skip_to_next(sc))
            return false;
    }
}

size_t rb_json_locate(const char *text, size_t len, const rb_json_step *path, size_t depth, size_t *line, size_t *col)
{
    scan sc = {text, len, 0};
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        sc.pos = 3;
    skip_ws(&sc);
    size_t found = 0, best = 0;
    for (; found < depth; found++) {
        const rb_json_step *st = &path[found];
        int open = peek(&sc);
        if (open != (st->key ? '{' : '['))
            break;
        sc.pos++;
        size_t at;
        if (st->key) {
            if (!find_member(&sc, st->key, st->index, &at))
                break;
        } else {
            if (!find_element(&sc, st->index))
                break;
            at = sc.pos;
        }
        best = at;
    }
    size_t ln = 1, line_start = 0;
    for (size_t i = 0; i < best; i++)
        if (text[i] == '\n') {
            ln++;
            line_start = i + 1;
        }
    *line = ln;
    *col = best - line_start + 1;
    return found;
}

static bool is_identifier(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

void rb_json_path_format(const rb_json_step *path, size_t depth, char *buf, size_t size)
{
    if (size == 0)
        return;
    buf[0] = '\0';
    size_t used = 0;
    for (size_t d = 0; d < depth && used + 1 < size; d++) {
        int n;
        if (!path[d].key)
            n = snprintf(buf + used, size - used, "[%zu]", path[d].index);
        else if (is_identifier(path[d].key))
            n = snprintf(buf + used, size - used, "%s%s", d ? "." : "", path[d].key);
        else
            n = snprintf(buf + used, size - used, "[\"%s\"]", path[d].key);
        if (n < 0)
            return;
        used += (size_t)n < size - used ? (size_t)n : size - used - 1;
    }
}

/* ---- syntax check: where and why a text is not JSON ------------------------------------------------ */
enum { NESTING_MAX = 1000 }; /* cJSON's CJSON_NESTING_LIMIT */

/* A string at sc->pos (the opening quote) with the escapes cJSON accepts. */
static const char *check_string(scan *sc, size_t *at)
{
    size_t open = sc->pos++;
    while (sc->pos < sc->len && sc->s[sc->pos] != '"') {
        if (sc->s[sc->pos] != '\\') {
            sc->pos++;
            continue;
        }
        size_t esc = sc->pos;
        unsigned char bytes[4];
        if (sc->pos + 1 < sc->len && sc->s[sc->pos + 1] == 'u') {
            scan probe = *sc;
            probe.pos += 2;
            long cp = read_hex4(&probe);
            if (cp >= 0xDC00 && cp <= 0xDFFF) {
                *at = esc;
                return "invalid \\u escape (lone low surrogate)";
            }
        }
        if (decode_char(sc, bytes) == 0) {
            *at = esc;
            return "invalid escape in a string";
        }
    }
    if (sc->pos >= sc->len) {
        *at = open;
        return "unterminated string";
    }
    sc->pos++;
    return NULL;
}

/* A number as cJSON reads it: starts with '-' or a digit; strtod must take at least one character. */
static const char *check_number(scan *sc, size_t *at)
{
    char buf[64];
    size_t n = 0;
    while (n < sizeof buf - 1 && sc->pos + n < sc->len && strchr("0123456789+-eE.", sc->s[sc->pos + n]) &&
           sc->s[sc->pos + n])
        buf[n] = sc->s[sc->pos + n], n++;
    buf[n] = '\0';
    char *end;
    (void)strtod(buf, &end);
    if (end == buf) {
        *at = sc->pos;
        return "invalid number";
    }
    sc->pos += (size_t)(end - buf);
    return NULL;
}

static const char *check_scalar(scan *sc, size_t *at)
{
    int c = peek(sc);
    if (c == '"')
        return check_string(sc, at);
    if (c == '-' || (c >= '0' && c <= '9'))
        return check_number(sc, at);
    static const char *const literals[] = {"null", "true", "false"};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(literals[i]);
        if (sc->len - sc->pos >= n && memcmp(sc->s + sc->pos, literals[i], n) == 0) {
            sc->pos += n;
            return NULL;
        }
    }
    *at = sc->pos;
    return "expected a value";
}

size_t rb_json_syntax_error(const char *text, size_t len, const char **what)
{
    scan sc = {text, len, 0};
    char stack[NESTING_MAX + 1];
    size_t depth = 0, at = 0;
    enum { VALUE, KEY, AFTER } state = VALUE;
    const char *why = NULL;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        sc.pos = 3;
    while (!why) {
        skip_ws(&sc);
        int c = peek(&sc);
        at = sc.pos;
        if (state == KEY) {
            if (c != '"')
                why = "expected a string key";
            else if (!(why = check_string(&sc, &at))) {
                skip_ws(&sc);
                at = sc.pos;
                why = peek(&sc) == ':' ? NULL : "expected ':'";
                sc.pos++;
                state = VALUE;
            }
        } else if (state == VALUE && (c == '{' || c == '[')) {
            if (depth == NESTING_MAX)
                why = "nested deeper than 1000 levels";
            else {
                stack[depth++] = (char)c;
                sc.pos++;
                skip_ws(&sc);
                if (peek(&sc) == (c == '{' ? '}' : ']')) {
                    sc.pos++;
                    depth--;
                    state = AFTER;
                } else
                    state = c == '{' ? KEY : VALUE;
            }
        } else if (state == VALUE) {
            why = check_scalar(&sc, &at);
            state = AFTER;
        } else if (depth == 0) {
            if (c < 0)
                return SIZE_MAX;
            why = "expected the end of the text";
        } else if (c == ',') {
            sc.pos++;
            state = stack[depth - 1] == '{' ? KEY : VALUE;
        } else if (c == (stack[depth - 1] == '{' ? '}' : ']')) {
            sc.pos++;
            depth--;
        } else {
            why = stack[depth - 1] == '{' ? "expected ',' or '}'" : "expected ',' or ']'";
        }
    }
    *what = why;
    return at;
}

/* ---- NUL escapes -------------------------------------------------------------------------------------- */
size_t rb_json_nul_escape(const char *text, size_t len, size_t *end, bool *is_key)
{
    size_t open = SIZE_MAX;
    bool nul = false;
    for (size_t i = 0; i < len; i++) {
        if (open == SIZE_MAX) {
            if (text[i] == '"')
                open = i, nul = false;
        } else if (text[i] == '\\') {
            nul = nul || (len - i > 5 && memcmp(text + i + 1, "u0000", 5) == 0);
            i++; /* the escaped character, a quote or a backslash included */
        } else if (text[i] == '"' && !nul) {
            open = SIZE_MAX;
        } else if (text[i] == '"') {
            scan sc = {text, len, i + 1};
            skip_ws(&sc);
            *end = i + 1;
            *is_key = peek(&sc) == ':';
            return open;
        }
    }
    return SIZE_MAX;
}

/* ---- cJSON builders -------------------------------------------------------------------------------------- */
cJSON *rb_cfg_add(rb_cfg_builder *b, cJSON *parent, const char *key, cJSON *item)
{
    if (!item) {
        b->ok = false;
        return NULL;
    }
    cJSON_bool added = key ? cJSON_AddItemToObject(parent, key, item) : cJSON_AddItemToArray(parent, item);
    if (!added) {
        cJSON_Delete(item);
        b->ok = false;
        return NULL;
    }
    return item;
}

cJSON *rb_cfg_strings(const char *const *s, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++) {
        cJSON *e = cJSON_CreateString(s[i]);
        if (!e || !cJSON_AddItemToArray(a, e)) {
            cJSON_Delete(e);
            cJSON_Delete(a);
            return NULL;
        }
    }
    return a;
}

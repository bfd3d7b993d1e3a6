/*
 * The login demo in C: a loop drives a login screen. A Fuser gathers the user's events
 * from three widgets, the update reduces them into the model and asks for a login
 * effect, an effect handler performs the login (simulated) and sends the answer back as
 * an event, and a Diffuser renders each model, redrawing only the parts that changed.
 *
 * The widgets have a context-less callback API (a bare function pointer, as many C
 * toolkits do), so each source asks libdiffuser for a real function pointer bound to
 * its dispatch (dfs_closure_new, made with libffi).
 *
 *   cc login_demo.c $(pkg-config --cflags --libs diffuser) -o login_demo
 *   ./login_demo [--script FILE | --interactive] [--color | --no-color]
 *
 * It prints the same lines as the Swift and Java demos (examples/LOGIN_DEMO.md).
 *
 * One file so that it builds with the one cc line above and reads top to bottom in the
 * order the data flows (model and update, value types, rendering, widgets, the loop);
 * splitting a C example would add headers that teach nothing about the library.
 */
#include <diffuser.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(call)                                                                   \
    do {                                                                              \
        dfs_status status_ = (call);                                                  \
        if (status_ != DFS_OK) {                                                      \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__,                    \
                    dfs_status_name(status_), dfs_last_error());                      \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

/* ---- Model and update (pure) ----------------------------------------------------- */

#define TEXT 128

typedef struct header {
    char title[2 * TEXT];    /* room for "Hello, <username>!" */
    char subtitle[2 * TEXT];
} header;

typedef struct login_model {
    header header;
    char hints[2][TEXT];
    int hint_count;
    char username[TEXT];
    char password[TEXT];
    char button[TEXT];
} login_model;

/* The user's edits and clicks, and the server's answers (sent back by the handler). */
typedef enum { USERNAME_CHANGED, PASSWORD_CHANGED, LOGIN_CLICKED, LOGIN_ACCEPTED, LOGIN_REFUSED } event_kind;

typedef struct login_event {
    event_kind kind;
    char text[TEXT];
} login_event;

/* What the update asks the world to do: log in. */
typedef struct login_effect {
    char username[TEXT];
    char password[TEXT];
} login_effect;

/* How the demo prints an event (the same text in every language). */
static void print_label(const login_event *event) {
    switch (event->kind) {
    case USERNAME_CHANGED: printf("username \"%s\"", event->text); break;
    case PASSWORD_CHANGED: printf("password \"%s\"", event->text); break;
    case LOGIN_CLICKED: printf("click"); break;
    case LOGIN_ACCEPTED: printf("login accepted"); break;
    case LOGIN_REFUSED: printf("login refused"); break;
    }
}

static void validate(login_model *m) {
    m->hint_count = 0;
    if (m->username[0] == '\0') strcpy(m->hints[m->hint_count++], "username is required");
    if (strlen(m->password) < 8) strcpy(m->hints[m->hint_count++], "password needs 8+ characters");
    strcpy(m->button, m->hint_count == 0 ? "enabled" : "disabled");
}

static login_model initial_model(void) {
    login_model m;
    memset(&m, 0, sizeof m);
    strcpy(m.header.title, "Welcome back");
    strcpy(m.header.subtitle, "Sign in to continue");
    validate(&m);
    return m;
}

/* What `event` does to `model`: 0, nothing (a click on a disabled button); 1, a new
 * model in *next; 2, a new model and a login effect in *effect. */
static int reduce(const login_model *model, const login_event *event, login_model *next, login_effect *effect) {
    *next = *model;
    switch (event->kind) {
    case USERNAME_CHANGED:
        snprintf(next->username, TEXT, "%s", event->text);
        if (event->text[0] == '\0') snprintf(next->header.subtitle, sizeof next->header.subtitle, "Sign in to continue");
        else snprintf(next->header.subtitle, sizeof next->header.subtitle, "Signing in as %s", event->text);
        validate(next);
        break;
    case PASSWORD_CHANGED:
        snprintf(next->password, TEXT, "%s", event->text);
        validate(next);
        break;
    case LOGIN_CLICKED:
        if (strcmp(model->button, "enabled") != 0) return 0;
        snprintf(next->button, TEXT, "signing in");
        memcpy(effect->username, model->username, TEXT);
        memcpy(effect->password, model->password, TEXT);
        return 2;
    case LOGIN_ACCEPTED:
        snprintf(next->header.title, sizeof next->header.title, "Hello, %s!", model->username);
        snprintf(next->header.subtitle, sizeof next->header.subtitle, "You are signed in");
        snprintf(next->button, TEXT, "signed in");
        break;
    case LOGIN_REFUSED:
        snprintf(next->header.subtitle, sizeof next->header.subtitle, "Wrong password, try again");
        next->password[0] = '\0';
        validate(next);
        break;
    }
    return 1;
}

/* ---- Value types: how the core compares and keeps models, headers, events, effects -- */

static int model_equal(const void *a, const void *b, void *ctx) {
    (void)ctx;
    return memcmp(a, b, sizeof(login_model)) == 0;
}

static int header_equal(const void *a, const void *b, void *ctx) {
    (void)ctx;
    const header *x = a, *y = b;
    return strcmp(x->title, y->title) == 0 && strcmp(x->subtitle, y->subtitle) == 0;
}

/* Values of these types are copied when kept and freed when dropped. */
static const void *copy_model(const void *v, void *ctx) {
    (void)ctx;
    login_model *copy = malloc(sizeof *copy);
    if (copy) memcpy(copy, v, sizeof *copy);
    return copy;
}

static const void *copy_header(const void *v, void *ctx) {
    (void)ctx;
    header *copy = malloc(sizeof *copy);
    if (copy) memcpy(copy, v, sizeof *copy);
    return copy;
}

static const void *copy_event(const void *v, void *ctx) {
    (void)ctx;
    login_event *copy = malloc(sizeof *copy);
    if (copy) memcpy(copy, v, sizeof *copy);
    return copy;
}

static const void *copy_effect(const void *v, void *ctx) {
    (void)ctx;
    login_effect *copy = malloc(sizeof *copy);
    if (copy) memcpy(copy, v, sizeof *copy);
    return copy;
}

static void free_value(const void *v, void *ctx) {
    (void)ctx;
    free((void *)v);
}

/* ---- Rendering ------------------------------------------------------------------- */

static const char *part_names[] = {"header.title",   "header.subtitle", "body.hints",
                                   "field.username", "field.password",  "button.login"};
enum { PARTS = 6 };
static int renders[PARTS];      /* draws per part, over the whole session */
static int rendered_this_model; /* draws since the last model was rendered in full */
static int use_color;

/* The effect of one part: ctx is the part's index. */
static int draw(const void *value, void *ctx) {
    int part = (int)(intptr_t)ctx;
    renders[part]++;
    rendered_this_model++;
    const char *text = value;
    if (use_color) printf("\033[1;33m");
    printf("   %-17s%s%s", part_names[part], part == 5 ? "( Log in ) " : "", text);
    if (use_color) printf("\033[0m");
    printf("\n");
    return 0;
}

/* Transforms: each returns a new value of its output type, which the core frees. */
static int select_header(const void *v, const void **out, void *ctx) {
    (void)ctx;
    *out = copy_header(&((const login_model *)v)->header, NULL);
    return *out ? 0 : 1;
}

static int select_title(const void *v, const void **out, void *ctx) {
    (void)ctx;
    *out = strdup(((const header *)v)->title);
    return 0;
}

static int select_subtitle(const void *v, const void **out, void *ctx) {
    (void)ctx;
    *out = strdup(((const header *)v)->subtitle);
    return 0;
}

static int select_hints(const void *v, const void **out, void *ctx) {
    (void)ctx;
    const login_model *m = v;
    char text[2 * TEXT + 4] = "ready";
    if (m->hint_count > 0) {
        snprintf(text, sizeof text, "%s", m->hints[0]);
        if (m->hint_count > 1) {
            strcat(text, "; ");
            strcat(text, m->hints[1]);
        }
    }
    *out = strdup(text);
    return 0;
}

static int select_username(const void *v, const void **out, void *ctx) {
    (void)ctx;
    char text[TEXT + 2];
    snprintf(text, sizeof text, "\"%s\"", ((const login_model *)v)->username);
    *out = strdup(text);
    return 0;
}

static int select_password(const void *v, const void **out, void *ctx) {
    (void)ctx;
    size_t n = strlen(((const login_model *)v)->password);
    char *text = malloc(n + 3);
    text[0] = '"';
    memset(text + 1, '*', n);
    text[n + 1] = '"';
    text[n + 2] = '\0';
    *out = text;
    return 0;
}

static int select_button(const void *v, const void **out, void *ctx) {
    (void)ctx;
    *out = strdup(((const login_model *)v)->button);
    return 0;
}

/* map(select, into(draw part)) over `type` values. */
static dfs_diffuser *part(dfs_type *type, dfs_transform_fn select, int index) {
    dfs_diffuser *leaf, *mapped;
    CHECK(dfs_diffuser_into(dfs_type_cstring(), draw, (void *)(intptr_t)index, NULL, &leaf));
    CHECK(dfs_diffuser_map(type, select, NULL, NULL, leaf, &mapped));
    dfs_diffuser_release(leaf); /* the parent keeps what it needs */
    return mapped;
}

/* ---- Widgets with a context-less callback API ------------------------------------- */

static void (*username_callback)(const char *text);
static void (*password_callback)(const char *text);
static void (*login_callback)(void);

static void text_field_on_change(int field, void (*callback)(const char *)) {
    if (field == 0) username_callback = callback;
    else password_callback = callback;
}

static void button_on_click(void (*callback)(void)) { login_callback = callback; }

/* Sources: connecting makes a closure bound to the dispatch and registers it. */
static int connect_field(dfs_dispatch *dispatch, void *ctx, void **connection) {
    dfs_ffi_type args[] = {DFS_FFI_STRING};
    void (*fn)(void);
    if (dfs_closure_new(dispatch, DFS_FFI_VOID, args, 1, &fn) != DFS_OK) return 1;
    text_field_on_change((int)(intptr_t)ctx, (void (*)(const char *))fn);
    *connection = ctx;
    return 0;
}

static void disconnect_field(void *connection, void *ctx) {
    (void)ctx;
    text_field_on_change((int)(intptr_t)connection, NULL);
}

static int connect_button(dfs_dispatch *dispatch, void *ctx, void **connection) {
    (void)ctx;
    (void)connection;
    void (*fn)(void);
    if (dfs_closure_new(dispatch, DFS_FFI_VOID, NULL, 0, &fn) != DFS_OK) return 1;
    button_on_click(fn);
    return 0;
}

static void disconnect_button(void *connection, void *ctx) {
    (void)connection;
    (void)ctx;
    button_on_click(NULL);
}

/* Turn a widget's ffi event (its callback's arguments) into a login event. */
static int to_event(const void *v, const void **out, void *ctx) {
    const dfs_ffi_event *e = v;
    login_event *event = calloc(1, sizeof *event);
    event->kind = (event_kind)(intptr_t)ctx;
    snprintf(event->text, TEXT, "%s", e->count > 0 && e->args[0].as.s ? e->args[0].as.s : "");
    *out = event;
    return 0;
}

/* ---- The loop: events -> update -> model -> screen; effects -> handler -> events ---- */

static int events_handled, effects_handled, models_rendered;

/* The update: reduce, then hand the core new values it owns (it frees them). */
static int update(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)ctx;
    login_model new_model;
    login_effect effect;
    int made = reduce(model, event, &new_model, &effect);
    if (made == 0) return 0; /* no new model: nothing is published */
    if (dfs_next_model(next, copy_model(&new_model, NULL)) != DFS_OK) return 1;
    if (made == 2 && dfs_next_effect(next, copy_effect(&effect, NULL)) != DFS_OK) return 1;
    return 0;
}

/* The effect handler: a simulated server, deterministic and immediate. The answer is
 * queued: the loop handles it after this step, as its own step. */
static int serve_login(const void *v, dfs_job *job, void *ctx) {
    (void)ctx;
    const login_effect *effect = v;
    login_event answer = {strcmp(effect->password, "opensesame") == 0 ? LOGIN_ACCEPTED : LOGIN_REFUSED, ""};
    effects_handled++;
    printf("   %-17slogin \"%s\" -> sends ", "effect", effect->username);
    print_label(&answer);
    printf("\n");
    if (dfs_job_send(job, &answer) != DFS_OK) return 1; /* copied through the event type */
    return dfs_job_finish(job) == DFS_OK ? 0 : 1;
}

/* The inspector prints what the loop does: each start and each event, as the update
 * sees it. */
static void inspect(const dfs_trace *trace, void *ctx) {
    (void)ctx;
    if (trace->kind == DFS_TRACE_STARTED) {
        printf("-- start\n");
    } else if (trace->kind == DFS_TRACE_STEPPED) {
        events_handled++;
        printf("-- ");
        print_label(trace->event);
        printf("\n");
        if (!trace->has_next_model) printf("   no new model: nothing rendered\n");
    }
}

/* Observes every model after the screen rendered it: prints the count of parts drawn. */
static int count_renders(const void *model, void *ctx) {
    (void)model;
    (void)ctx;
    models_rendered++;
    printf("   %d of %d parts rendered\n", rendered_this_model, PARTS);
    rendered_this_model = 0;
    return 0;
}

/* Plays one line on the widgets; returns 0 if it is not understood. */
static int play(char *line) {
    while (*line == ' ') line++;
    if (*line == '\0' || *line == '#') return 1;
    char *rest = line;
    while (*rest && *rest != ' ') rest++;
    size_t word = (size_t)(rest - line);
    while (*rest == ' ') rest++;
    if (word == 8 && strncmp(line, "username", 8) == 0) {
        if (username_callback) username_callback(rest);
    } else if (word == 8 && strncmp(line, "password", 8) == 0) {
        if (password_callback) password_callback(rest);
    } else if (word == 5 && strncmp(line, "click", 5) == 0) {
        if (login_callback) login_callback();
    } else {
        return 0;
    }
    return 1;
}

int main(int argc, char **argv) {
    const char *script = "examples/login.script";
    int interactive = 0;
    use_color = isatty(1);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--script") == 0 && i + 1 < argc) script = argv[++i];
        else if (strcmp(argv[i], "--interactive") == 0) interactive = 1;
        else if (strcmp(argv[i], "--color") == 0) use_color = 1;
        else if (strcmp(argv[i], "--no-color") == 0) use_color = 0;
        else {
            printf("usage: login_demo [--script FILE | --interactive] [--color | --no-color]\n");
            return 2;
        }
    }
    if (dfs_abi_version() != DFS_ABI_VERSION) {
        fprintf(stderr, "libdiffuser ABI %d, header %d\n", dfs_abi_version(), DFS_ABI_VERSION);
        return 1;
    }

    /* The screen: intoAll(map(header, intoAll(title, subtitle)), hints, username, ...). */
    dfs_type *model_type, *header_type, *event_type, *effect_type;
    CHECK(dfs_type_new("login_model", model_equal, copy_model, free_value, NULL, NULL, &model_type));
    CHECK(dfs_type_new("header", header_equal, copy_header, free_value, NULL, NULL, &header_type));
    CHECK(dfs_type_new("login_event", NULL, copy_event, free_value, NULL, NULL, &event_type));
    CHECK(dfs_type_new("login_effect", NULL, copy_effect, free_value, NULL, NULL, &effect_type));
    dfs_diffuser *screen;

    dfs_diffuser *header_parts[] = {part(header_type, select_title, 0), part(header_type, select_subtitle, 1)};
    dfs_diffuser *header_all, *header_part;
    CHECK(dfs_diffuser_into_all(header_type, header_parts, 2, &header_all));
    CHECK(dfs_diffuser_map(model_type, select_header, NULL, NULL, header_all, &header_part));
    dfs_diffuser *parts[] = {header_part, part(model_type, select_hints, 2), part(model_type, select_username, 3),
                             part(model_type, select_password, 4), part(model_type, select_button, 5)};
    CHECK(dfs_diffuser_into_all(model_type, parts, 5, &screen));
    for (int i = 0; i < 2; i++) dfs_diffuser_release(header_parts[i]);
    for (int i = 0; i < 5; i++) dfs_diffuser_release(parts[i]);
    dfs_diffuser_release(header_all);

    /* The events: fromAll(extract(username), extract(password), extractConstant(click)). */
    dfs_fuser *username_source, *password_source, *button_source, *children[3], *events;
    CHECK(dfs_fuser_from(dfs_type_ffi_event(), connect_field, disconnect_field, (void *)0, NULL, &username_source));
    CHECK(dfs_fuser_from(dfs_type_ffi_event(), connect_field, disconnect_field, (void *)1, NULL, &password_source));
    CHECK(dfs_fuser_from(dfs_type_ffi_event(), connect_button, disconnect_button, NULL, NULL, &button_source));
    CHECK(dfs_fuser_extract(event_type, to_event, (void *)USERNAME_CHANGED, NULL, username_source, &children[0]));
    CHECK(dfs_fuser_extract(event_type, to_event, (void *)PASSWORD_CHANGED, NULL, password_source, &children[1]));
    login_event click = {LOGIN_CLICKED, ""};
    CHECK(dfs_fuser_extract_constant(event_type, &click, button_source, &children[2]));
    CHECK(dfs_fuser_from_all(event_type, children, 3, &events));

    /* The loop, started once the screen, the counter and the widgets are wired to it. */
    login_model first = initial_model();
    dfs_handler server = {serve_login, NULL, NULL, NULL};
    dfs_loop_config config = {
        .model_type = model_type,
        .event_type = event_type,
        .effect_type = effect_type,
        .model = &first,
        .update = update,
        .handlers = &server,
        .handler_count = 1,
        .inspect = inspect,
        .manual_start = 1,
    };
    dfs_loop *loop;
    dfs_disposable *rendering, *counting, *connection;
    CHECK(dfs_loop_new(&config, &loop));
    CHECK(dfs_loop_render(loop, screen, &rendering));
    CHECK(dfs_loop_observe(loop, count_renders, NULL, NULL, &counting));
    CHECK(dfs_loop_connect(loop, events, &connection));

    printf("Login demo (C): a Loop updates the model, a Diffuser renders it, a Fuser gathers the user's events.\n");
    CHECK(dfs_loop_start(loop));

    char line[4096];
    FILE *input = interactive ? stdin : fopen(script, "r");
    if (input == NULL) {
        printf("cannot open script %s\n", script);
        return 1;
    }
    if (interactive) printf("Type: username TEXT | password TEXT | click | quit\n");
    for (;;) {
        if (interactive) {
            printf("> ");
            fflush(stdout);
        }
        if (fgets(line, sizeof line, input) == NULL) break;
        line[strcspn(line, "\r\n")] = '\0';
        if (interactive && strcmp(line, "quit") == 0) break;
        if (!play(line)) {
            if (!interactive) {
                printf("bad script line: %s\n", line);
                return 1;
            }
            printf("   ? try: username alice | password opensesame | click\n");
        }
    }
    if (!interactive) fclose(input);
    CHECK(dfs_loop_dispose(loop)); /* disconnects the widgets */

    int total = 0;
    printf("Renders per part over %d models (a naive renderer redraws every part of every model):\n",
           models_rendered);
    for (int i = 0; i < PARTS; i++) {
        printf("   %-17s%d of %d\n", part_names[i], renders[i], models_rendered);
        total += renders[i];
    }
    int naive = models_rendered * PARTS;
    printf("   %-17s%d of %d (%d%% fewer draws)\n", "total", total, naive, (naive - total) * 100 / naive);
    printf("Loop: events handled: %d (%d from the widgets, %d sent back by the effect handler); effects handled: %d\n",
           events_handled, events_handled - effects_handled, effects_handled, effects_handled);

    dfs_disposable *disposables[] = {rendering, counting, connection};
    for (int i = 0; i < 3; i++) dfs_disposable_release(disposables[i]);
    dfs_loop_release(loop);
    dfs_fuser *fusers[] = {username_source, password_source, button_source, children[0], children[1], children[2], events};
    for (int i = 0; i < 7; i++) dfs_fuser_release(fusers[i]);
    dfs_diffuser_release(screen);
    dfs_type_release(model_type);
    dfs_type_release(header_type);
    dfs_type_release(event_type);
    dfs_type_release(effect_type);
    return 0;
}

/*
 * player.c — Diffuser and Fuser from C: a tiny music player "screen".
 *
 * The model is an immutable C struct. A Diffuser renders it: each part of the screen
 * (title, progress, play button, volume) is redrawn only when the part of the model it
 * shows changed. A Fuser gathers the clicks of two buttons (sources written in C) into
 * one stream of events; each event makes a new model, which is rendered again.
 *
 *   event  ->  new model  ->  diffuser  ->  only the changed parts re-render
 *
 * Build: it is part of the CMake build (target diffuser_example_c), or by hand:
 *   cc player.c $(pkg-config --cflags --libs diffuser)
 */
#define _POSIX_C_SOURCE 200809L /* strdup */

#include <diffuser.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------
 * The model
 * ------------------------------------------------------------------------------------ */

typedef struct controls {
    int playing; /* 0 or 1 */
    int volume;  /* 0..10 */
} controls;

typedef struct player {
    const char *title; /* static strings in this example */
    int position;      /* seconds */
    controls controls;
} player;

/* Stops the example with a message if a call fails. */
static void must(dfs_status status, const char *what) {
    if (status != DFS_OK) {
        fprintf(stderr, "%s failed: %s (%s)\n", what, dfs_status_name(status), dfs_last_error());
        exit(1);
    }
}

/* ------------------------------------------------------------------------------------
 * Value types: how the core compares and keeps our structs.
 *
 * Both types copy on retain, so the core keeps its own copy in its caches and we may
 * reuse or free our models right after each run.
 * ------------------------------------------------------------------------------------ */

static int player_equal(const void *a, const void *b, void *ctx) {
    (void)ctx;
    const player *x = a, *y = b;
    return x == y || (strcmp(x->title, y->title) == 0 && x->position == y->position &&
                      x->controls.playing == y->controls.playing && x->controls.volume == y->controls.volume);
}

static int controls_equal(const void *a, const void *b, void *ctx) {
    (void)ctx;
    return memcmp(a, b, sizeof(controls)) == 0;
}

/* One retain/release pair for both structs: the type's ctx is the struct's size. */
static const void *copy_retain(const void *value, void *ctx) {
    size_t size = (size_t)ctx;
    void *copy = malloc(size);
    if (copy) memcpy(copy, value, size);
    return copy; /* NULL tells the core the copy failed */
}

static void copy_release(const void *value, void *ctx) {
    (void)ctx;
    free((void *)value);
}

/* ------------------------------------------------------------------------------------
 * Renderers: the effects. Each prints what it redraws.
 * ------------------------------------------------------------------------------------ */

static int rendered; /* parts rendered in the current run */

static int render_title(const void *value, void *ctx) {
    (void)ctx;
    printf("   title     <- \"%s\"\n", (const char *)value);
    rendered++;
    return 0;
}

static int render_position(const void *value, void *ctx) {
    (void)ctx;
    int seconds = (int)(intptr_t)value; /* small integers travel inside the pointer */
    printf("   progress  <- %d:%02d\n", seconds / 60, seconds % 60);
    rendered++;
    return 0;
}

static int render_button(const void *value, void *ctx) {
    (void)ctx;
    /* The button shows "play" when NOT playing: we get the inverted flag. */
    printf("   button    <- %s\n", value ? "[ play ]" : "[ pause ]");
    rendered++;
    return 0;
}

static int render_volume(const void *value, void *ctx) {
    (void)ctx;
    int volume = (int)(intptr_t)value;
    printf("   volume    <- %.*s%.*s\n", volume, "##########", 10 - volume, "..........");
    rendered++;
    return 0;
}

/* ------------------------------------------------------------------------------------
 * Transforms for map: select the part of the value a child needs.
 * ------------------------------------------------------------------------------------ */

/* cstring has a release function (it frees its copies), so return a copy. */
static int select_title(const void *value, const void **out, void *ctx) {
    (void)ctx;
    *out = strdup(((const player *)value)->title);
    return *out ? 0 : 1;
}

/* dfs_type_pointer has no release: a plain integer in the pointer is fine. */
static int select_position(const void *value, const void **out, void *ctx) {
    (void)ctx;
    *out = (const void *)(intptr_t)((const player *)value)->position;
    return 0;
}

/* The controls type copies (it has a release): return a copy the core will free. */
static int select_controls(const void *value, const void **out, void *ctx) {
    (void)ctx;
    controls *copy = malloc(sizeof *copy);
    if (!copy) return 1;
    *copy = ((const player *)value)->controls;
    *out = copy;
    return 0;
}

static int select_playing(const void *value, const void **out, void *ctx) {
    (void)ctx;
    *out = ((const controls *)value)->playing ? (const void *)1 : NULL; /* a truth value */
    return 0;
}

static int select_volume(const void *value, const void **out, void *ctx) {
    (void)ctx;
    *out = (const void *)(intptr_t)((const controls *)value)->volume;
    return 0;
}

/* ------------------------------------------------------------------------------------
 * Building the diffuser:
 *
 *   into_all(player,
 *       map(title,    into(cstring, render_title)),
 *       map(position, into(pointer, render_position)),
 *       map(controls, into_all(controls,
 *           map(playing, invert(into(pointer, render_button))),
 *           map(volume,  into(pointer, render_volume)))))
 *
 * Composition retains children, so each child handle is released right after use.
 * ------------------------------------------------------------------------------------ */

static dfs_diffuser *leaf(dfs_type *type, dfs_effect_fn effect) {
    dfs_diffuser *d = NULL;
    must(dfs_diffuser_into(type, effect, NULL, NULL, &d), "dfs_diffuser_into");
    return d;
}

/* map(transform, child), consuming the child handle. */
static dfs_diffuser *focus(dfs_type *type, dfs_transform_fn transform, dfs_diffuser *child) {
    dfs_diffuser *d = NULL;
    must(dfs_diffuser_map(type, transform, NULL, NULL, child, &d), "dfs_diffuser_map");
    dfs_diffuser_release(child);
    return d;
}

/* invert(child), consuming the child handle. */
static dfs_diffuser *negate(dfs_diffuser *child) {
    dfs_diffuser *d = NULL;
    must(dfs_diffuser_invert(child, &d), "dfs_diffuser_invert");
    dfs_diffuser_release(child);
    return d;
}

/* into_all(children), consuming the children handles. */
static dfs_diffuser *all(dfs_type *type, dfs_diffuser **children, size_t count) {
    dfs_diffuser *d = NULL;
    must(dfs_diffuser_into_all(type, children, count, &d), "dfs_diffuser_into_all");
    for (size_t i = 0; i < count; i++) dfs_diffuser_release(children[i]);
    return d;
}

static dfs_diffuser *build_screen(dfs_type *player_type, dfs_type *controls_type) {
    dfs_diffuser *control_parts[] = {
        focus(controls_type, select_playing, negate(leaf(dfs_type_pointer(), render_button))),
        focus(controls_type, select_volume, leaf(dfs_type_pointer(), render_volume)),
    };
    dfs_diffuser *parts[] = {
        focus(player_type, select_title, leaf(dfs_type_cstring(), render_title)),
        focus(player_type, select_position, leaf(dfs_type_pointer(), render_position)),
        focus(player_type, select_controls, all(controls_type, control_parts, 2)),
    };
    return all(player_type, parts, 3);
}

/* ------------------------------------------------------------------------------------
 * A C source: a button that calls whoever is connected when it is pressed.
 * ------------------------------------------------------------------------------------ */

typedef struct button {
    const char *name;
    dfs_dispatch *listener; /* set while a fuser connection listens */
} button;

static int button_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    button *b = ctx;
    b->listener = dispatch;
    *connection = b;
    return 0;
}

static void button_disconnect(void *connection, void *ctx) {
    (void)ctx;
    ((button *)connection)->listener = NULL;
}

/* What the UI toolkit would do on a click. */
static void press(button *b) {
    printf("-- click %s\n", b->name);
    if (b->listener) dfs_dispatch_emit(b->listener, b);
    else printf("   (nobody listens)\n");
}

/* ------------------------------------------------------------------------------------
 * The loop: events -> new model -> render
 * ------------------------------------------------------------------------------------ */

typedef struct app {
    dfs_diffuser *screen;
    player model;
} app;

static void show(app *a, player next) {
    rendered = 0;
    must(dfs_diffuser_run(a->screen, &next), "dfs_diffuser_run");
    printf("   (%d part%s re-rendered)\n", rendered, rendered == 1 ? "" : "s");
    a->model = next; /* the core kept its own copy: `next` may go away */
}

/* The effect of the fuser connection: one event, one new model. */
static int on_event(const void *event, void *ctx) {
    app *a = ctx;
    player next = a->model;
    if (strcmp(event, "toggle") == 0) next.controls.playing = !next.controls.playing;
    if (strcmp(event, "louder") == 0 && next.controls.volume < 10) next.controls.volume++;
    show(a, next);
    return 0;
}

int main(void) {
    printf("libdiffuser %s (ABI %d)\n", dfs_version(), dfs_abi_version());

    dfs_type *player_type = NULL, *controls_type = NULL;
    must(dfs_type_new("player", player_equal, copy_retain, copy_release, (void *)sizeof(player), NULL, &player_type),
         "dfs_type_new(player)");
    must(dfs_type_new("controls", controls_equal, copy_retain, copy_release, (void *)sizeof(controls), NULL,
                      &controls_type),
         "dfs_type_new(controls)");

    app a;
    a.screen = build_screen(player_type, controls_type);

    printf("\n== a few models\n");
    printf("-- first model: everything renders\n");
    show(&a, (player){"Blue in Green", 0, {0, 5}});
    printf("-- the same model again: nothing renders\n");
    show(&a, (player){"Blue in Green", 0, {0, 5}});
    printf("-- one second later\n");
    show(&a, (player){"Blue in Green", 1, {0, 5}});
    printf("-- next track, position back to 0\n");
    show(&a, (player){"So What", 0, {0, 5}});

    printf("\n== events from two C buttons through a fuser\n");
    button play = {"play/pause", NULL}, louder = {"volume+", NULL};
    dfs_fuser *play_clicks = NULL, *louder_clicks = NULL, *toggles = NULL, *louders = NULL, *events = NULL;
    must(dfs_fuser_from(dfs_type_pointer(), button_connect, button_disconnect, &play, NULL, &play_clicks), "from(play)");
    must(dfs_fuser_from(dfs_type_pointer(), button_connect, button_disconnect, &louder, NULL, &louder_clicks),
         "from(louder)");
    /* Each click becomes a named event: extract_constant(event, clicks). */
    must(dfs_fuser_extract_constant(dfs_type_cstring(), "toggle", play_clicks, &toggles), "extract_constant");
    must(dfs_fuser_extract_constant(dfs_type_cstring(), "louder", louder_clicks, &louders), "extract_constant");
    dfs_fuser *sources[] = {toggles, louders};
    must(dfs_fuser_from_all(dfs_type_cstring(), sources, 2, &events), "from_all");
    dfs_fuser_release(play_clicks);
    dfs_fuser_release(louder_clicks);
    dfs_fuser_release(toggles);
    dfs_fuser_release(louders);

    press(&play); /* not connected yet */
    dfs_disposable *connection = NULL;
    must(dfs_fuser_connect(events, on_event, &a, NULL, &connection), "dfs_fuser_connect");
    press(&play);
    press(&louder);
    press(&louder);
    press(&play);
    dfs_disposable_dispose(connection); /* disconnects both buttons */
    press(&louder);                     /* nobody listens any more */

    dfs_disposable_release(connection);
    dfs_fuser_release(events);
    dfs_diffuser_release(a.screen);
    dfs_type_release(player_type);
    dfs_type_release(controls_type);
    return 0;
}

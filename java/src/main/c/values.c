/*
 * values.c — the dfs_type of Java objects: how the core compares, keeps and drops them.
 *
 * Java objects travel as jobject pointers described by one dfs_type, created in
 * JNI_OnLoad: equal answers what java.util.Objects.equals(a, b) would (the core passes
 * the cached value first and the new value second, so a user equals is called as
 * old.equals(new)), retain makes a global reference, release deletes it. Java null is the
 * NULL pointer. Equality of Strings, boxed primitives and enums is decided here without
 * calling into Java (an upcall costs about ten times more than these comparisons, and
 * their equals cannot be overridden); any other class has its equals() called. A value
 * passed to a run or an emission is the caller's local reference, borrowed for the call,
 * and so is every part a map's transform returns during a run (lent until the run
 * returns; see borrowing_caller in upcalls.c); the core retains (as a global reference)
 * whatever it keeps longer, which for a run is only what a gate caches.
 */
#include <stdint.h>
#include <string.h>

#include "jni_glue.h"

/* The value type of Java objects. */
dfs_type *dfsj_type;

static jmethodID m_object_equals;

/* The classes whose equality value_equal decides natively (all final but Enum and
 * Number), and the `value` fields of the boxes. c_known is an interface that all of
 * them implement and that few other classes do: java.lang.constant.Constable (Java 12
 * and later), or Comparable on older JVMs. */
static jclass c_string, c_integer, c_long, c_double, c_float, c_short, c_byte, c_character,
    c_boolean, c_number, c_enum, c_known;
static jfieldID f_integer_value, f_long_value, f_double_value, f_float_value, f_short_value,
    f_byte_value, f_character_value, f_boolean_value;

int dfsj_values_load(JNIEnv *env) {
    if (!(c_string = dfsj_global_class(env, "java/lang/String")) ||
        !(c_integer = dfsj_global_class(env, "java/lang/Integer")) ||
        !(c_long = dfsj_global_class(env, "java/lang/Long")) ||
        !(c_double = dfsj_global_class(env, "java/lang/Double")) ||
        !(c_float = dfsj_global_class(env, "java/lang/Float")) ||
        !(c_short = dfsj_global_class(env, "java/lang/Short")) ||
        !(c_byte = dfsj_global_class(env, "java/lang/Byte")) ||
        !(c_character = dfsj_global_class(env, "java/lang/Character")) ||
        !(c_boolean = dfsj_global_class(env, "java/lang/Boolean")) ||
        !(c_number = dfsj_global_class(env, "java/lang/Number")) ||
        !(c_enum = dfsj_global_class(env, "java/lang/Enum")))
        return -1;
    if (!(c_known = dfsj_global_class(env, "java/lang/constant/Constable"))) {
        (*env)->ExceptionClear(env); /* Java 11: NoClassDefFoundError */
        if (!(c_known = dfsj_global_class(env, "java/lang/Comparable"))) return -1;
    }

    if (!(f_integer_value = (*env)->GetFieldID(env, c_integer, "value", "I")) ||
        !(f_long_value = (*env)->GetFieldID(env, c_long, "value", "J")) ||
        !(f_double_value = (*env)->GetFieldID(env, c_double, "value", "D")) ||
        !(f_float_value = (*env)->GetFieldID(env, c_float, "value", "F")) ||
        !(f_short_value = (*env)->GetFieldID(env, c_short, "value", "S")) ||
        !(f_byte_value = (*env)->GetFieldID(env, c_byte, "value", "B")) ||
        !(f_character_value = (*env)->GetFieldID(env, c_character, "value", "C")) ||
        !(f_boolean_value = (*env)->GetFieldID(env, c_boolean, "value", "Z")))
        return -1;

    jclass object = (*env)->FindClass(env, "java/lang/Object");
    if (object == NULL) return -1;
    m_object_equals = (*env)->GetMethodID(env, object, "equals", "(Ljava/lang/Object;)Z");
    (*env)->DeleteLocalRef(env, object);
    return m_object_equals ? 0 : -1;
}

/* value_equal's answer when it must ask the object's own equals(). */
#define ASK_EQUALS (-2)

/* Whether two Strings have the same characters: lengths first, then the UTF-16 contents
 * copied out in stack-sized chunks (GetStringRegion neither allocates nor pins, where
 * GetStringCritical would inflate a Latin-1 string into a fresh buffer). */
static int strings_equal(JNIEnv *env, jstring a, jstring b) {
    jsize length = (*env)->GetStringLength(env, a);
    if ((*env)->GetStringLength(env, b) != length) return 0;
    enum { CHUNK = 256 };
    jchar x[CHUNK], y[CHUNK];
    for (jsize start = 0; start < length; start += CHUNK) {
        jsize n = length - start < CHUNK ? length - start : CHUNK;
        (*env)->GetStringRegion(env, a, start, n, x);
        (*env)->GetStringRegion(env, b, start, n, y);
        if (memcmp(x, y, sizeof(jchar) * (size_t)n) != 0) return 0;
    }
    return 1;
}

/* Double.equals compares doubleToLongBits: every NaN is one value, and 0.0 differs from
 * -0.0. Float.equals does the same with floatToIntBits. */
static int doubles_equal(jdouble x, jdouble y) {
    if (x != x) return y != y;
    uint64_t bx, by;
    memcpy(&bx, &x, sizeof bx);
    memcpy(&by, &y, sizeof by);
    return bx == by;
}

static int floats_equal(jfloat x, jfloat y) {
    if (x != x) return y != y;
    uint32_t bx, by;
    memcpy(&bx, &x, sizeof bx);
    memcpy(&by, &y, sizeof by);
    return bx == by;
}

/* a.equals(b) for two distinct non-null objects, when the JDK's definition is known and
 * cannot be overridden: 1 or 0, or ASK_EQUALS for any other class. The boxes and String
 * are final, so `instanceof` is the exact-class test their equals() make (an Integer
 * never equals a Long). Enum.equals is final and is identity. None of these calls can
 * throw or create local references; each costs a JNI transition (~15 ns, against
 * ~150 ns for an upcall), so the common kinds are tested first and c_known turns most
 * other classes away after three tests. */
static int equal_natively(JNIEnv *env, jobject a, jobject b) {
#define IS(object, cls) ((*env)->IsInstanceOf(env, (object), (cls)))
#define SAME_FIELD(cls, Type, field)                                                    \
    (IS(b, cls) && (*env)->Get##Type##Field(env, a, field) == (*env)->Get##Type##Field(env, b, field))
    if (IS(a, c_string)) return IS(b, c_string) && strings_equal(env, (jstring)a, (jstring)b);
    if (IS(a, c_integer)) return SAME_FIELD(c_integer, Int, f_integer_value);
    if (!IS(a, c_known)) return ASK_EQUALS;
    if (IS(a, c_boolean)) return SAME_FIELD(c_boolean, Boolean, f_boolean_value);
    if (IS(a, c_enum)) return 0;
    if (IS(a, c_number)) {
        if (IS(a, c_long)) return SAME_FIELD(c_long, Long, f_long_value);
        if (IS(a, c_double))
            return IS(b, c_double) && doubles_equal((*env)->GetDoubleField(env, a, f_double_value),
                                                    (*env)->GetDoubleField(env, b, f_double_value));
        if (IS(a, c_float))
            return IS(b, c_float) && floats_equal((*env)->GetFloatField(env, a, f_float_value),
                                                  (*env)->GetFloatField(env, b, f_float_value));
        if (IS(a, c_short)) return SAME_FIELD(c_short, Short, f_short_value);
        if (IS(a, c_byte)) return SAME_FIELD(c_byte, Byte, f_byte_value);
        return ASK_EQUALS; /* BigDecimal, AtomicInteger, user subclasses of Number */
    }
    if (IS(a, c_character)) return SAME_FIELD(c_character, Char, f_character_value);
    return ASK_EQUALS;
#undef SAME_FIELD
#undef IS
}

/* Objects.equals(a, b). Identity and null first, then the native comparisons above,
 * and only for other classes an upcall to a.equals(b) (Objects.equals without its
 * extra frame), whose exception, if any, fails the comparison.
 *
 * Two references to one object answer DFS_EQUAL_SAME: a gate comparing its cache (a
 * global reference) with a part or a run's value (a local one) then keeps the global
 * reference it has, instead of a NewGlobalRef for the new one and a DeleteGlobalRef for
 * the old (together about a fifth of a run where most parts are the objects of the
 * previous run). */
static int value_equal(const void *a, const void *b, void *ctx) {
    (void)ctx;
    if (a == b) return 1;
    if (a == NULL || b == NULL) return 0;
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return -1;
    JNIEnv *env = u.env;
    int result;
    if ((*env)->IsSameObject(env, (jobject)a, (jobject)b)) {
        result = DFS_EQUAL_SAME;
    } else if ((result = equal_natively(env, (jobject)a, (jobject)b)) == ASK_EQUALS) {
        jboolean same = (*env)->CallBooleanMethod(env, (jobject)a, m_object_equals, (jobject)b);
        result = dfsj_upcall_failed(env) ? -1 : (same ? 1 : 0);
    }
    dfsj_env_leave(&u);
    return result;
}

static const void *value_retain(const void *value, void *ctx) {
    (void)ctx;
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return NULL;
    jobject kept = (*u.env)->NewGlobalRef(u.env, (jobject)value);
    if (kept == NULL && (*u.env)->ExceptionCheck(u.env)) (*u.env)->ExceptionClear(u.env);
    dfsj_env_leave(&u);
    return kept;
}

static void value_release(const void *value, void *ctx) {
    (void)ctx;
    dfsj_upcall_env u;
    if (dfsj_env_enter(&u)) return;
    (*u.env)->DeleteGlobalRef(u.env, (jobject)value);
    dfsj_env_leave(&u);
}

/* The type itself, made once by JNI_OnLoad. */
dfs_status dfsj_values_create_type(void) {
    return dfs_type_new("java.lang.Object", value_equal, value_retain, value_release, NULL, NULL, &dfsj_type);
}

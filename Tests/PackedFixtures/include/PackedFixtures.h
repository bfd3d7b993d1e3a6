/* C types for the Swift tests that Swift cannot declare itself: a packed struct, whose
 * members lie at any offset, so that a part read in place (FieldNode) may lie at an
 * address its type's alignment does not promise. */
#ifndef PACKED_FIXTURES_H
#define PACKED_FIXTURES_H

#include <stdint.h>

typedef struct __attribute__((packed)) PackedRecord {
    uint8_t tag;
    uint64_t wide;
    uint8_t tail;
    uint64_t last;
} PackedRecord;

#endif

/* PackedFixtures is a header-only module; a target needs one source file. */
#include "PackedFixtures.h"

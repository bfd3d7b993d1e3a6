// The C89 header test, compiled as C++98 with -pedantic -Werror (see test_c89_header.c).
#include "test_c89_header.c"

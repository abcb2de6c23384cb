#include <version>
#ifndef _LIBCPP_VERSION
#error not libc++
#endif

#include <physfs.h>

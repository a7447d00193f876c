/* compile check: the implementation in one translation unit ... */
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include "../gpuml.h"   /* included twice: harmless */
int two_tu_b(void);
int main(void) { return two_tu_b(); }

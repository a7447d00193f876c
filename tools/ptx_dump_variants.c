/* Writes every kernel variant test_jit compiles (gpuml__family_variants) as a CUDA source file,
   vNNN.cu, into the current directory, and list.txt: "vNNN family hopper|options" a line.
   tools/ptx_vec_audit.sh builds and runs it.  Build: cc -std=c99 -O0 tools/ptx_dump_variants.c
   -o build/ptx_dump_variants -ldl -lpthread -lm */
#define GPUML_IMPLEMENTATION
#include "../gpuml.h"
#include <stdio.h>
int main(void)
{
    int v, i;
    FILE *list = fopen("list.txt", "w");
    if (!list) return 1;
    for (v = 0; gpuml__family_variants[v][0]; v++) {
        const gpuml__family *f = NULL;
        char path[64], *src;
        FILE *fp;
        for (i = 0; gpuml__all_families[i]; i++)
            if (strcmp(gpuml__all_families[i]->name, gpuml__family_variants[v][0]) == 0) f = gpuml__all_families[i];
        if (!f) continue;
        src = gpuml__family_source(f);
        snprintf(path, sizeof path, "v%03d.cu", v);
        fp = fopen(path, "w");
        if (!fp || !src) return 1;
        fputs(src, fp);
        fclose(fp);
        fprintf(list, "v%03d %s %d|%s\n", v, f->name, f->hopper, gpuml__family_variants[v][1]);
        free(src);
    }
    fclose(list);
    return 0;
}

set -u
export GPUML_CACHE_DIR=$PWD/build/cache
make -s -j16 build/test_conv_tf32 > /dev/null 2>&1; cc -std=c99 -O2 bench/bench_conv.c -o build/bench_conv -ldl -lpthread -lm
O=$OUT
for rn in 2 4 8; do GPUML_CONV_RN=$rn ./build/test_conv_tf32 =resnet_accuracy =every_cfg_wgmma =shapes_gpu_wgmma > $O/acc_$rn.log 2>&1; echo "rn $rn: $(tail -1 $O/acc_$rn.log)"; grep -i "wgmma 3x\|K_gemm\|wgmma:" $O/acc_$rn.log | head -8; done
for rn in 2 4 8; do GPUML_CONV_RN=$rn ./build/bench_conv resnet | grep "f32 NCHW " | grep -v tf32 | sed "s/f32 NCHW/f32 NCHW rn$rn/" >> $O/g.log; done
python3 bench/conv_torch.py resnet > $O/t.log 2>&1
python3 - $O/g.log $O/t.log <<'PY'
import re,sys,math
pat=re.compile(r"^(gpuml|torch)\s+resnet\s+(.*?)\s+(c\d+\s+\d+\s+k\d+\s+r\d+\s+s\d+)\s+(-?[0-9.]+) us")
g={};t={}
for f,d in ((sys.argv[1],g),(sys.argv[2],t)):
    for l in open(f):
        m=pat.match(l)
        if m: d.setdefault(" ".join(m.group(3).split()),{})[m.group(2)]=float(m.group(4))
rs={2:[],4:[],8:[]}
for L in g:
    ref=t.get(L,{}).get("f32 NCHW")
    row=[L,"%.1f"%ref]
    for rn in (2,4,8):
        v=g[L].get("f32 NCHW rn%d"%rn); row.append("%.1f (%.2f)"%(v,ref/v)); rs[rn].append(ref/v)
    print(" | ".join(row))
for rn in rs: print("rn",rn,"geomean %.3f min %.2f"%(math.exp(sum(map(math.log,rs[rn]))/len(rs[rn])),min(rs[rn])))
PY

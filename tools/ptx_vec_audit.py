"""Scalar global loads / stores at adjacent offsets from one base register, per kernel and variant:
candidates for a vector access the compiler split (a float2 store that became two 4-byte ones cost a
1x1 conv 1.2-1.8x on an H100).  Reads vNNN.ptx and list.txt in the current directory (written by
tools/ptx_vec_audit.sh); prints "pairs op type kernel variant options", most pairs first.  Many hits
are deliberate element-wise fallbacks: read the kernel before changing it."""
import re, glob, collections, sys
fams = {l.split()[0]: l.split()[1] + ' ' + l.split('|',1)[1].strip() for l in open('list.txt')}
pat = re.compile(r'^\s*(st|ld)\.global(?:\.[a-z]+)*\.(f32|b32|u32|s32|b16|u16|f16|b64|u64|f64)\s+(.*)$')
res = collections.Counter(); examples = {}
for f in sorted(glob.glob('v*.ptx')):
    vid = f[:-4]
    ent = None; base = collections.defaultdict(set)
    def flush():
        for (k, op, ty, reg), offs in base.items():
            w = {'f32':4,'b32':4,'u32':4,'s32':4,'b16':2,'u16':2,'f16':2,'b64':8,'u64':8,'f64':8}[ty]
            pairs = sum(1 for o in offs if o + w in offs and o % (2*w) == 0)
            if pairs:
                key = (vid, k, op, ty)
                res[key] += pairs
    for line in open(f):
        if line.startswith('.visible .entry') or line.startswith('.entry'):
            if ent: flush()
            ent = line.split()[-1].split('(')[0]; base = collections.defaultdict(set)
            continue
        m = pat.match(line)
        if m and ent and '.v2' not in line and '.v4' not in line:
            op, ty, args = m.groups()
            am = re.search(r'\[(%rd\d+)(?:\+(-?\d+))?\]', args)
            if am:
                base[(ent, op, ty, am.group(1))].add(int(am.group(2) or 0))
    if ent: flush()
for (vid, k, op, ty), n in sorted(res.items(), key=lambda x: -x[1]):
    print(f"{n:4d} {op} {ty:4s} {k:40s} {vid} {fams[vid][:90]}")

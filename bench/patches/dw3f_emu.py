# gpuml_conv_dw3f (bench/patches/dw3f_nchw_flat.patch) replayed on the CPU: run with python3 (numpy)
# emulation of gpuml_conv_dw3f's index math, shuffles and edges (float64), against a direct reference
import numpy as np, itertools
def ref(x, w, H, W):
    N, C = x.shape[:2]
    xp = np.zeros((N, C, H + 2, W + 2)); xp[:, :, 1:-1, 1:-1] = x
    y = np.zeros((N, C, H, W))
    for r in range(3):
        for s in range(3):
            y += xp[:, :, r:r + H, s:s + W] * w[None, :, r, s, None, None]
    return y
def emu(x, w, H, W, V, R):
    N, C = x.shape[:2]
    flat = x.reshape(-1)       # contiguous NCHW
    xn, xc, xh = C * H * W, H * W, W
    y = np.full((N, C, H, W), np.nan)
    cw = W // V; nbd = (H + R - 1) // R
    total = N * C * nbd * cw
    nblocks = (total + 255) // 256
    for b in range(nblocks):
        for wp in range(8):
            lanes = range(32)
            st = []
            for lane in lanes:
                g = b * 256 + wp * 32 + lane
                live = g < total
                gl = g if live else 0
                o = gl % cw; bd = gl // cw % nbd; pl = gl // cw // nbd
                n, c = pl // C, pl % C
                h0 = bd * R - 1
                base = n * xn + c * xc + o * V
                raw = []
                for i in range(R + 2):
                    h = h0 + i
                    raw.append(flat[base + h * xh: base + h * xh + V].copy() if live and 0 <= h < H else np.zeros(V))
                needl, needr = o > 0, o < cw - 1
                edge = []
                for i in range(R + 2):
                    h = h0 + i
                    e = 0.0
                    if live and 0 <= h < H and ((lane == 0 and needl) or (lane == 31 and needr)):
                        e = flat[base + h * xh + (-1 if lane == 0 else V)]
                    edge.append(e)
                st.append(dict(live=live, o=o, n=n, c=c, h0=h0, raw=raw, edge=edge, needl=needl, needr=needr))
            for lane in lanes:
                t = st[lane]
                xr = []
                for i in range(R + 2):
                    row = np.zeros(V + 2); row[1:V + 1] = t['raw'][i]
                    l = st[lane - 1]['raw'][i][V - 1] if lane > 0 else t['raw'][i][V - 1]   # shfl_up: lane 0 gets its own
                    r = st[lane + 1]['raw'][i][0] if lane < 31 else t['raw'][i][0]
                    row[0] = 0.0 if not t['needl'] else (t['edge'][i] if lane == 0 else l)
                    row[V + 1] = 0.0 if not t['needr'] else (t['edge'][i] if lane == 31 else r)
                    xr.append(row)
                t['xr'] = xr
            for lane in lanes:
                t = st[lane]
                if not t['live']: continue
                for k in range(R):
                    pp = t['h0'] + 1 + k
                    if pp >= H: continue
                    for j in range(V):
                        a = sum(t['xr'][k + r][j + s] * w[t['c'], r, s] for r in range(3) for s in range(3))
                        assert np.isnan(y[t['n'], t['c'], pp, t['o'] * V + j]), "written twice"
                        y[t['n'], t['c'], pp, t['o'] * V + j] = a
    return y
rng = np.random.default_rng(1)
bad = 0
for (N, C, H, W, V, R) in [(1, 1, 1, 8, 8, 4), (2, 3, 5, 24, 8, 4), (1, 17, 9, 40, 8, 8), (2, 3, 17, 8, 8, 2), (1, 2, 33, 112, 8, 8),
                           (2, 5, 7, 12, 4, 4), (1, 3, 12, 20, 4, 8), (1, 1, 57, 56, 4, 8), (2, 67, 3, 4, 4, 2), (1, 4, 6, 264, 8, 4),
                           (2, 3, 7, 7, 1, 8), (1, 5, 14, 14, 2, 4), (2, 2, 28, 28, 4, 8), (1, 3, 4, 66, 2, 2), (1, 2, 3, 13, 1, 4)]:
    x = rng.standard_normal((N, C, H, W)); w = rng.standard_normal((C, 3, 3))
    e = emu(x, w, H, W, V, R); r = ref(x, w, H, W)
    err = np.nanmax(np.abs(e - r)) if not np.isnan(e).any() else float('inf')
    print(N, C, H, W, V, R, "unwritten" if np.isnan(e).any() else "max err %.2e" % err)
    bad += not (err < 1e-9)
print("bad", bad)

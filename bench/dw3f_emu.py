# gpuml_conv_dw3f (kernels/conv.cu) replayed on the CPU: run with python3 (numpy)
# The kernel's item split, chunk loads, lane 0 / 31 edge loads and shuffles, warp by warp in float64,
# against a direct convolution (depthwise 3x3, stride S, top / left padding 1, zero outside).
import numpy as np

def ref(x, w, S, P, Q):
    N, C, H, W = x.shape
    xp = np.zeros((N, C, H + 2 + 2 * S, W + 2 + 2 * S)); xp[:, :, 1:H + 1, 1:W + 1] = x
    y = np.zeros((N, C, P, Q))
    for r in range(3):
        for s in range(3):
            y += xp[:, :, r:r + S * P:S, s:s + S * Q:S][:, :, :P, :Q] * w[None, :, r, s, None, None]
    return y

def emu(x, w, S, P, Q, V, R):
    N, C, H, W = x.shape
    flat = x.reshape(-1)
    xn, xc, xh = C * H * W, H * W, W
    y = np.full((N, C, P, Q), np.nan)
    cw = Q // V; nbd = (P + R - 1) // R; NI = (R - 1) * S + 3
    total = N * C * nbd * cw
    for b in range((total + 255) // 256):
        for wp in range(8):
            st = []
            for lane in range(32):
                g = b * 256 + wp * 32 + lane
                live = g < total
                gl = g if live else 0
                o = gl % cw; bd = gl // cw % nbd; pl = gl // cw // nbd
                n, c = pl // C, pl % C
                p0 = bd * R; h0 = p0 * S - 1
                base = n * xn + c * xc + o * V * S
                raw = []
                for i in range(NI):
                    h = h0 + i
                    ok = live and 0 <= h < H
                    raw.append(np.concatenate([flat[base + h * xh + u * V: base + h * xh + u * V + V] if ok else np.zeros(V) for u in range(S)]))
                needl, needr = o > 0, S == 1 and o < cw - 1
                edge = []
                for i in range(NI):
                    h = h0 + i
                    e = 0.0
                    if live and 0 <= h < H and ((lane == 0 and needl) or (lane == 31 and needr)):
                        e = flat[base + h * xh + (-1 if lane == 0 else V)]
                    edge.append(e)
                st.append(dict(live=live, o=o, n=n, c=c, p0=p0, raw=raw, edge=edge, needl=needl, needr=needr))
            for lane in range(32):
                t = st[lane]
                xr = []
                for i in range(NI):
                    row = np.zeros(S * V + 2); row[1:S * V + 1] = t['raw'][i]
                    l = st[lane - 1]['raw'][i][S * V - 1] if lane > 0 else t['raw'][i][S * V - 1]
                    r = st[lane + 1]['raw'][i][0] if lane < 31 else t['raw'][i][0]
                    row[0] = 0.0 if not t['needl'] else (t['edge'][i] if lane == 0 else l)
                    row[S * V + 1] = 0.0 if S != 1 or not t['needr'] else (t['edge'][i] if lane == 31 else r)
                    xr.append(row)
                if not t['live']:
                    continue
                for k in range(R):
                    pp = t['p0'] + k
                    if pp >= P:
                        continue
                    for j in range(V):
                        a = sum(xr[S * k + fr][S * j + s] * w[t['c'], fr, s] for fr in range(3) for s in range(3))
                        assert np.isnan(y[t['n'], t['c'], pp, t['o'] * V + j]), "written twice"
                        y[t['n'], t['c'], pp, t['o'] * V + j] = a
    return y

rng = np.random.default_rng(1)
bad = 0
# (N, C, H, W, S, V, R); at stride 2, W = 2 Q and P = ceil(H / 2) (bottom padding 1)
for (N, C, H, W, S, V, R) in [(1, 1, 1, 8, 1, 8, 4), (2, 3, 5, 24, 1, 8, 4), (1, 17, 9, 40, 1, 8, 8), (2, 3, 17, 8, 1, 8, 2),
                              (1, 2, 33, 112, 1, 8, 8), (2, 5, 7, 12, 1, 4, 4), (1, 3, 12, 20, 1, 4, 8), (1, 1, 57, 56, 1, 4, 8),
                              (2, 67, 3, 4, 1, 4, 2), (1, 4, 6, 264, 1, 8, 4), (2, 3, 7, 7, 1, 1, 8), (1, 5, 14, 14, 1, 2, 4),
                              (2, 2, 28, 28, 1, 4, 8), (1, 3, 4, 66, 1, 2, 2), (1, 2, 3, 13, 1, 1, 4),
                              (1, 3, 9, 40, 2, 4, 4), (2, 2, 17, 16, 2, 8, 2), (1, 4, 28, 28, 2, 2, 4), (2, 3, 33, 112, 2, 8, 2),
                              (1, 2, 14, 14, 2, 1, 4), (1, 1, 1, 8, 2, 4, 2), (1, 5, 57, 56, 2, 4, 4)]:
    P = (H + 2 - 3) // S + 1; Q = W // S
    x = rng.standard_normal((N, C, H, W)); w = rng.standard_normal((C, 3, 3))
    e = emu(x, w, S, P, Q, V, R); r = ref(x, w, S, P, Q)
    err = np.max(np.abs(e - r)) if not np.isnan(e).any() else float('inf')
    print(N, C, H, W, "stride", S, "V", V, "R", R, "unwritten" if np.isnan(e).any() else "max err %.2e" % err)
    bad += not (err < 1e-9)
print("bad", bad)

"""NumPy's PCG64 stream and its ``random`` / ``standard_normal`` draws, compiled (numba).

:func:`reliquant.pmnist.fields.draw_fields` positions one ``numpy.random.Generator`` per
image (``state = start``, ``advance(i * IMAGE_STRIDE)``) and draws its fields, a few
microseconds of Python per image. The compiled kernels of :mod:`reliquant.pmnist.fused`
draw the *same numbers* without leaving machine code:

* PCG64 (O'Neill 2014, the 128-bit LCG with the XSL-RR output NumPy uses):
  ``s <- s * M + inc (mod 2^128)``, output ``rotr64(hi(s) ^ lo(s), hi(s) >> 58)``;
  ``advance(d)`` is the LCG jump ``s <- A_d s + C_d`` (Brown 1994), computed by squaring;
* ``Generator.random``: ``(next_uint64 >> 11) * 2^-53``;
* ``Generator.standard_normal``: NumPy's 256-layer ziggurat (Marsaglia & Tsang 2000) with
  its tail and wedge tests and NumPy's tables, taken from numba's copy of them
  (``numba.np.random._constants``, the tables of numba's own ``Generator`` support).

128-bit products are LLVM ``i128`` arithmetic (:func:`_mul128`), so the stream is exact;
``tests/pmnist/test_fields.py`` checks every draw against NumPy bit for bit.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic
from numba.np.random._constants import (
    fi_double,
    ki_double,
    wi_double,
    ziggurat_nor_inv_r,
    ziggurat_nor_r,
)

__all__ = [
    "FI",
    "INV53",
    "KI",
    "MASK64",
    "MULT",
    "NOR_INV_R",
    "NOR_R",
    "WI",
    "apply",
    "fill_normal",
    "fill_uniform",
    "jump",
    "split128",
]

#: NumPy's PCG64 multiplier (PCG_DEFAULT_MULTIPLIER_128) as (high, low) 64-bit halves.
MULT = (np.uint64(2549297995355413924), np.uint64(4865540595714422341))
MASK64 = (1 << 64) - 1

KI = np.ascontiguousarray(ki_double, dtype=np.uint64)
WI = np.ascontiguousarray(wi_double, dtype=np.float64)
FI = np.ascontiguousarray(fi_double, dtype=np.float64)
NOR_R = float(ziggurat_nor_r)
NOR_INV_R = float(ziggurat_nor_inv_r)
INV53 = 1.0 / 9007199254740992.0

_U64 = np.uint64
_ONE = np.uint64(1)
_LOW8 = np.uint64(0xFF)
_MANT = np.uint64(0x000FFFFFFFFFFFFF)


@intrinsic
def _mul128(typingctx, ah, al, bh, bl):
    """``(ah:al) * (bh:bl) mod 2^128`` as ``(high, low)`` uint64 halves (LLVM i128)."""
    sig = types.UniTuple(types.uint64, 2)(types.uint64, types.uint64, types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        i128 = ir.IntType(128)
        i64 = ir.IntType(64)
        sixty_four = ir.Constant(i128, 64)

        def join(hi, lo):
            return builder.or_(
                builder.shl(builder.zext(hi, i128), sixty_four), builder.zext(lo, i128)
            )

        p = builder.mul(join(args[0], args[1]), join(args[2], args[3]))
        hi = builder.trunc(builder.lshr(p, sixty_four), i64)
        lo = builder.trunc(p, i64)
        return context.make_tuple(builder, signature.return_type, (hi, lo))

    return sig, codegen


@njit(inline="always")
def _add128(ah, al, bh, bl):
    """``(ah:al) + (bh:bl) mod 2^128``."""
    lo = al + bl
    carry = _ONE if lo < al else _U64(0)
    return ah + bh + carry, lo


@njit(inline="always")
def _affine(ah, al, mh, ml, ch, cl):
    """``m * a + c mod 2^128`` (one LCG step or jump)."""
    ph, pl = _mul128(ah, al, mh, ml)
    return _add128(ph, pl, ch, cl)


@njit(cache=True)
def jump(delta, mh, ml, ch, cl):
    """``(A, C)`` of ``delta`` applications of ``s <- m s + c``: ``s_delta = A s + C``."""
    mh, ml, ch, cl = _U64(mh), _U64(ml), _U64(ch), _U64(cl)
    ah, al = _U64(0), _ONE
    bh, bl = _U64(0), _U64(0)
    d = _U64(delta)
    while d > _U64(0):
        if d & _ONE:
            ah, al = _mul128(ah, al, mh, ml)
            bh, bl = _affine(bh, bl, mh, ml, ch, cl)
        # c <- (m + 1) c, m <- m m
        m1h, m1l = _add128(mh, ml, _U64(0), _ONE)
        ch, cl = _mul128(m1h, m1l, ch, cl)
        mh, ml = _mul128(mh, ml, mh, ml)
        d >>= _ONE
    return ah, al, bh, bl


@njit(cache=True)
def apply(sh, sl, ah, al, ch, cl):
    """``A s + C mod 2^128`` for state ``s = sh:sl`` (a jump from :func:`jump`)."""
    return _affine(_U64(sh), _U64(sl), _U64(ah), _U64(al), _U64(ch), _U64(cl))


@njit(inline="always")
def _output(sh, sl):
    """PCG's XSL-RR output of state ``sh:sl``."""
    x = sh ^ sl
    rot = sh >> _U64(58)
    return (x >> rot) | (x << ((_U64(64) - rot) & _U64(63)))


@njit(inline="always")
def _next_double(sh, sl, ih, il):
    sh, sl = _affine(sh, sl, MULT[0], MULT[1], ih, il)
    return sh, sl, float(_output(sh, sl) >> _U64(11)) * INV53


@njit(cache=True)
def fill_uniform(out, sh, sl, ih, il):
    """``out[:] = Generator.random(out.size)`` from state ``sh:sl`` (increment ``ih:il``).

    Returns the state after the draws.
    """
    sh, sl, ih, il = _U64(sh), _U64(sl), _U64(ih), _U64(il)
    for k in range(out.size):
        sh, sl = _affine(sh, sl, MULT[0], MULT[1], ih, il)
        out[k] = float(_output(sh, sl) >> _U64(11)) * INV53
    return sh, sl


@njit(cache=True)
def fill_normal(out, sh, sl, ih, il):
    """``out[:] = Generator.standard_normal(out.size)`` (NumPy's ziggurat) from ``sh:sl``.

    Returns the state after the draws (rejections use extra draws, as in NumPy).
    """
    sh, sl, ih, il = _U64(sh), _U64(sl), _U64(ih), _U64(il)
    mh, ml = MULT
    for k in range(out.size):
        while True:
            sh, sl = _affine(sh, sl, mh, ml, ih, il)
            r = _output(sh, sl)
            idx = r & _LOW8
            r >>= _U64(8)
            sign = r & _ONE
            rabs = (r >> _ONE) & _MANT
            x = float(rabs) * WI[idx]
            if sign:
                x = -x
            if rabs < KI[idx]:
                out[k] = x
                break
            if idx == 0:  # the tail beyond NOR_R
                while True:
                    sh, sl, u1 = _next_double(sh, sl, ih, il)
                    xx = -NOR_INV_R * np.log1p(-u1)
                    sh, sl, u2 = _next_double(sh, sl, ih, il)
                    yy = -np.log1p(-u2)
                    if yy + yy > xx * xx:
                        break
                out[k] = -(NOR_R + xx) if (rabs >> _U64(8)) & _ONE else NOR_R + xx
                break
            sh, sl, u = _next_double(sh, sl, ih, il)
            if (FI[idx - 1] - FI[idx]) * u + FI[idx] < np.exp(-0.5 * x * x):
                out[k] = x
                break
    return sh, sl


def split128(value: int) -> tuple[np.uint64, np.uint64]:
    """A Python int below 2^128 as (high, low) uint64 halves."""
    return np.uint64((value >> 64) & MASK64), np.uint64(value & MASK64)

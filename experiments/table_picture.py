"""Write example pictures of the table (``craits_env.render_rgb.table_picture``) as PNG files.

    python experiments/table_picture.py                 # docs/table_rgb.png
    python experiments/table_picture.py --all OUT_DIR   # also 2/7/10 players, 30 cards, game over

The PNG writer is a few lines of ``zlib`` and ``struct`` (8-bit RGB, no filter), so the
package needs no imaging library.
"""

from __future__ import annotations

import argparse
import struct
import zlib
from pathlib import Path

import numpy as np

from craits_env.cards import NUM_CARDS
from craits_env.engine import Game
from craits_env.render_rgb import table_picture
from craits_env.rules import Rules
from craits_env.testing.scenario import stacked_game

ROOT = Path(__file__).resolve().parent.parent


def png_bytes(rgb: np.ndarray) -> bytes:
    """An ``(H, W, 3)`` ``uint8`` array as the bytes of a PNG file."""
    if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] != 3:
        raise ValueError(f"expected an (H, W, 3) uint8 array, got {rgb.shape} {rgb.dtype}")
    h, w, _ = rgb.shape
    raw = np.zeros((h, w * 3 + 1), np.uint8)  # each row: filter byte 0, then its pixels
    raw[:, 1:] = rgb.reshape(h, w * 3)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)  # 8 bits, colour type 2 (RGB)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw.tobytes(), 9))
        + chunk(b"IEND", b"")
    )


def example_game() -> Game:
    """Four players in the third hand of a seeded game (each playing its first legal action),
    at the first moment a count is on while seat 0 holds eight cards or more."""
    g = Game(4, seed=0)
    while not (g.hand_index == 2 and g.count > 0 and len(g.hands[0]) >= 8):
        g.apply(g.legal_actions()[0])
    return g


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "table_rgb.png")
    parser.add_argument("--all", type=Path, default=None, help="also write variants here")
    args = parser.parse_args()
    g = example_game()
    names = ["dana", "alice", "bob", "carol"]
    args.out.write_bytes(png_bytes(table_picture(g, 0, names)))
    print(f"wrote {args.out}")
    if args.all is None:
        return
    args.all.mkdir(parents=True, exist_ok=True)
    variants = {}
    for n in (2, 7, 10):
        game = Game(n, seed=n)
        for _ in range(25):
            game.apply(game.legal_actions()[-1])
        variants[f"players{n}"] = table_picture(game, 0)
    for k in (30, 50):  # two decks: two hands of k cards each and the starter
        deck = [c for c in range(NUM_CARDS) for _ in range(2)]
        big = stacked_game([deck[1::2][:k], deck[::2][-k:]], starter="Qs", num_decks=2)
        variants[f"hand{k}"] = table_picture(big, 0)
    over = Game(3, Rules.short_game(), seed=5)
    while not over.is_over:
        over.apply(over.legal_actions()[0])
    variants["over"] = table_picture(over, 1)
    for name, rgb in variants.items():
        path = args.all / f"table_{name}.png"
        path.write_bytes(png_bytes(rgb))
        print(f"wrote {path}")


if __name__ == "__main__":
    main()

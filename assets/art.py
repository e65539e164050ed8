#!/usr/bin/env python3
"""Draws StackShot's art as PNG files: `python3 assets/art.py` rewrites assets/sprites/*.png and assets/font.png.

The PNGs are the source the build converts (build.rs); this script is only how they were first drawn, kept so
that a change of colour or shape stays one edit. Standard library only (zlib + struct write the PNGs).
Each sprite is ASCII art: one character a pixel, `.` transparent, any other a colour of PALETTE. A row of half
the width is mirrored into a symmetrical full row.
"""
import os
import struct
import zlib

# One palette for all the art, so everything on screen belongs together. Values are multiples of 8: exactly
# what the GBA's 5-bit channels can show.
PALETTE = {
    "k": (16, 16, 40),     # outline: deep navy, never pure black
    "w": (248, 248, 248),  # white
    "l": (176, 192, 216),  # light steel
    "g": (112, 120, 152),  # steel
    "d": (56, 64, 96),     # dark steel
    "c": (136, 240, 248),  # cyan glow
    "b": (72, 152, 248),   # blue
    "B": (32, 72, 176),    # deep blue
    "r": (240, 64, 72),    # red
    "R": (136, 24, 56),    # dark red
    "o": (248, 144, 40),   # orange
    "y": (248, 232, 96),   # yellow
    "G": (104, 216, 96),   # green
    "h": (32, 120, 80),    # dark green
    "p": (192, 104, 232),  # violet
    "P": (96, 40, 144),    # dark violet
    "m": (248, 128, 184),  # pink
}


def mirrored(half_rows):
    """Full rows from left halves: the right half is the left one reversed."""
    return [row + row[::-1] for row in half_rows]


SHIP = mirrored([
    ".......k",
    "......kw",
    "......kc",
    ".....kbc",
    ".....kbw",
    "....kkbl",
    "...kbkbl",
    "..kbbkbl",
    ".kbbBkll",
    "kbbBkgll",
    "kbBkdgkl",
    "kBk.kdgk",
    "kk...kdk",
    "......ko",
    "......oy",
    ".......y",
])

# Enemies, each with its own silhouette: a diving dart, a saucer, a crab and a spiked mine.
DART = mirrored([
    "kk......",
    "krk.....",
    "krrk....",
    ".kRrk...",
    ".kRrrkkk",
    "..kRrrrl",
    "..kRRrlw",
    "...kRrlw",
    "...kRrrl",
    "....kRrr",
    "....kRRr",
    ".....kRr",
    ".....kyo",
    "......ky",
    ".......k",
    "........",
])

SAUCER = mirrored([
    "........",
    "........",
    "........",
    "......kk",
    ".....kcw",
    "....kccc",
    "...kkkkk",
    ".kkGGGGG",
    "kGGGGGGG",
    "khGyhGyh",
    "khhhhhhh",
    ".kkhhhhh",
    "...kkkkk",
    "........",
    "........",
    "........",
])

CRAB = mirrored([
    "........",
    ".k......",
    "kpk....k",
    "kpk...kp",
    "kppk.kpp",
    ".kppkppp",
    "..kpppww",
    "..kppPwk",
    ".kkPpppp",
    "kpkPPppp",
    "kp.kPPPp",
    "kp..kPPP",
    ".k.kp.kk",
    "...kp...",
    "....k...",
    "........",
])

MINE = mirrored([
    ".......y",
    ".......o",
    "..o...ko",
    "...o.kyo",
    "....kooo",
    "...koyoo",
    "...kyooo",
    "oykoooww",
    "rRkoorwk",
    "...korrr",
    "...kRorr",
    "....kRRo",
    "...R.kRR",
    "..R...kR",
    ".......R",
    ".......r",
])

BOSS = mirrored([
    "................",
    "..kk............",
    ".kglk...........",
    ".kglk.......kkkk",
    ".kgdk......kllll",
    ".kgdkkkkkkklgggg",
    ".kgddddddkllgddd",
    "kggdgggggkllgdkk",
    "klgdgllllkgllkRR",
    "klgdglwwlkgllkRr",
    "klgdgllllkglkRrr",
    "klgdgggggkglkRrm",
    "kdgddddddkglkRrw",
    "kdgkkkkkkkglkRrr",
    "kdgk.kRRRkglkRRr",
    "kdgk.kRrrkglkkRR",
    "kdgk.kRrrkgllkkk",
    "kdgk.kRrrkgglllk",
    ".kdk.kRRRkdggggg",
    ".kdk..kkkkddgggg",
    ".kdk....kddddddd",
    "..kk.....kkdkkkk",
    ".........kdk.kRR",
    ".........kdk.kRr",
    "........kdk..kRr",
    "........kdk...kR",
    ".......kok....kR",
    ".......kyk.....k",
    "........y.......",
    "................",
    "................",
    "................",
])

PLAYER_BULLET = mirrored([
    "...k",
    "..kw",
    "..kc",
    "..kc",
    "..kc",
    "..kb",
    "...k",
    "....",
])

ENEMY_BULLET = mirrored([
    "....",
    "..kk",
    ".kmw",
    ".kmm",
    ".krm",
    "..kr",
    "....",
    "....",
])

PICKUP = mirrored([
    "..kk",
    ".kGy",
    "kGGw",
    "khkk",
    "khkw",
    "kGkk",
    ".kGh",
    "..kk",
])

# Four frames of an explosion, side by side: a flash, a fireball, breaking up, smoke.
EXPLOSION_FRAMES = [
    mirrored(["....", "....", "...y", "..yw", "..yw", "...y", "....", "...."]),
    mirrored(["...o", "..oy", ".oyy", "oyyw", "oyyw", ".oyy", "..oy", "...o"]),
    mirrored([".r..", "r.ro", "..oy", ".roo", ".ro.", "r.r.", "...r", ".r.."]),
    mirrored([".d..", "d...", "...g", "..d.", "..g.", "d...", "...d", ".d.."]),
]

# The font: 5x7 glyphs in 8x8 cells, white with a navy shadow one pixel down and right. Characters from ' ' (32)
# to '_' (95), 16 a row: the layout build.rs expects.
GLYPHS = {
    "0": ["01110", "10011", "10101", "10101", "11001", "10001", "01110"],
    "1": ["00100", "01100", "00100", "00100", "00100", "00100", "01110"],
    "2": ["01110", "10001", "00001", "00110", "01000", "10000", "11111"],
    "3": ["11110", "00001", "00001", "01110", "00001", "00001", "11110"],
    "4": ["00010", "00110", "01010", "10010", "11111", "00010", "00010"],
    "5": ["11111", "10000", "11110", "00001", "00001", "10001", "01110"],
    "6": ["00110", "01000", "10000", "11110", "10001", "10001", "01110"],
    "7": ["11111", "00001", "00010", "00100", "01000", "01000", "01000"],
    "8": ["01110", "10001", "10001", "01110", "10001", "10001", "01110"],
    "9": ["01110", "10001", "10001", "01111", "00001", "00010", "01100"],
    "A": ["01110", "10001", "10001", "11111", "10001", "10001", "10001"],
    "B": ["11110", "10001", "10001", "11110", "10001", "10001", "11110"],
    "C": ["01110", "10001", "10000", "10000", "10000", "10001", "01110"],
    "D": ["11100", "10010", "10001", "10001", "10001", "10010", "11100"],
    "E": ["11111", "10000", "10000", "11110", "10000", "10000", "11111"],
    "F": ["11111", "10000", "10000", "11110", "10000", "10000", "10000"],
    "G": ["01110", "10001", "10000", "10111", "10001", "10001", "01111"],
    "H": ["10001", "10001", "10001", "11111", "10001", "10001", "10001"],
    "I": ["01110", "00100", "00100", "00100", "00100", "00100", "01110"],
    "J": ["00111", "00010", "00010", "00010", "00010", "10010", "01100"],
    "K": ["10001", "10010", "10100", "11000", "10100", "10010", "10001"],
    "L": ["10000", "10000", "10000", "10000", "10000", "10000", "11111"],
    "M": ["10001", "11011", "10101", "10101", "10001", "10001", "10001"],
    "N": ["10001", "10001", "11001", "10101", "10011", "10001", "10001"],
    "O": ["01110", "10001", "10001", "10001", "10001", "10001", "01110"],
    "P": ["11110", "10001", "10001", "11110", "10000", "10000", "10000"],
    "Q": ["01110", "10001", "10001", "10001", "10101", "10010", "01101"],
    "R": ["11110", "10001", "10001", "11110", "10100", "10010", "10001"],
    "S": ["01111", "10000", "10000", "01110", "00001", "00001", "11110"],
    "T": ["11111", "00100", "00100", "00100", "00100", "00100", "00100"],
    "U": ["10001", "10001", "10001", "10001", "10001", "10001", "01110"],
    "V": ["10001", "10001", "10001", "10001", "10001", "01010", "00100"],
    "W": ["10001", "10001", "10001", "10101", "10101", "10101", "01010"],
    "X": ["10001", "10001", "01010", "00100", "01010", "10001", "10001"],
    "Y": ["10001", "10001", "01010", "00100", "00100", "00100", "00100"],
    "Z": ["11111", "00001", "00010", "00100", "01000", "10000", "11111"],
    "!": ["00100", "00100", "00100", "00100", "00100", "00000", "00100"],
    "?": ["01110", "10001", "00001", "00110", "00100", "00000", "00100"],
    ".": ["00000", "00000", "00000", "00000", "00000", "01100", "01100"],
    ",": ["00000", "00000", "00000", "00000", "01100", "00100", "01000"],
    ":": ["00000", "01100", "01100", "00000", "01100", "01100", "00000"],
    "-": ["00000", "00000", "00000", "11111", "00000", "00000", "00000"],
    "+": ["00000", "00100", "00100", "11111", "00100", "00100", "00000"],
    "/": ["00001", "00010", "00010", "00100", "01000", "01000", "10000"],
    "'": ["00100", "00100", "01000", "00000", "00000", "00000", "00000"],
    "(": ["00010", "00100", "01000", "01000", "01000", "00100", "00010"],
    ")": ["01000", "00100", "00010", "00010", "00010", "00100", "01000"],
    "<": ["00010", "00100", "01000", "10000", "01000", "00100", "00010"],
    ">": ["01000", "00100", "00010", "00001", "00010", "00100", "01000"],
    "=": ["00000", "00000", "11111", "00000", "11111", "00000", "00000"],
    "*": ["00000", "10101", "01110", "11111", "01110", "10101", "00000"],
    "#": ["01010", "01010", "11111", "01010", "11111", "01010", "01010"],
}


def font_rows():
    """The font sheet as ASCII art: 16x4 cells of 8x8."""
    rows = [["."] * 128 for _ in range(32)]
    for char, glyph in GLYPHS.items():
        cell = ord(char) - 32
        left, top = (cell % 16) * 8, (cell // 16) * 8
        for y, line in enumerate(glyph):
            for x, bit in enumerate(line):
                if bit == "1":
                    # The shadow first, so the face of the next pixel can cover it.
                    if rows[top + y + 1][left + x + 2] == ".":
                        rows[top + y + 1][left + x + 2] = "k"
                    rows[top + y][left + x + 1] = "w"
    return ["".join(row) for row in rows]


def side_by_side(frames):
    return ["".join(frame[y] for frame in frames) for y in range(len(frames[0]))]


def write_png(path, rows, scale=1):
    """An 8-bit RGBA PNG of the ASCII art, each pixel `scale` x `scale`."""
    width, height = len(rows[0]) * scale, len(rows) * scale
    raw = bytearray()
    for row in rows:
        assert len(row) * scale == width, f"{path}: rows of different lengths"
        line = bytearray([0])  # filter type: none
        for char in row:
            pixel = (0, 0, 0, 0) if char == "." else PALETTE[char] + (255,)
            line += bytes(pixel) * scale
        raw += bytes(line) * scale

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    with open(path, "wb") as out:
        out.write(b"\x89PNG\r\n\x1a\n")
        out.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)))
        out.write(chunk(b"IDAT", zlib.compress(bytes(raw), 9)))
        out.write(chunk(b"IEND", b""))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    sprites = {
        "ship": SHIP,
        "dart": DART,
        "saucer": SAUCER,
        "crab": CRAB,
        "mine": MINE,
        "boss": BOSS,
        "player_bullet": PLAYER_BULLET,
        "enemy_bullet": ENEMY_BULLET,
        "pickup": PICKUP,
        "explosion.8x8": side_by_side(EXPLOSION_FRAMES),
    }
    for name, rows in sprites.items():
        write_png(os.path.join(here, "sprites", name + ".png"), rows)
    write_png(os.path.join(here, "font.png"), font_rows())
    # A contact sheet at 4x for looking at the art, not used by the build.
    if os.environ.get("PREVIEW"):
        sheet = []
        for rows in list(sprites.values()) + [font_rows()]:
            for row in rows:
                sheet.append(row.ljust(128, ".").replace(".", "_"))
            sheet.append("_" * 128)
        PALETTE["_"] = (8, 16, 48)  # the game's backdrop, only in the preview
        write_png(os.environ["PREVIEW"], sheet, scale=4)


if __name__ == "__main__":
    main()

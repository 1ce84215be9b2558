"""Renders of dice seen obliquely and close up (issue 37, item 2): side faces with their own pips.

The tray renderer (:mod:`vision.render`) models a camera nearly straight
above; here a pinhole camera is tilted 0-60 degrees from the vertical
(:class:`Camera`), so every visible face of a die, top or side, is a planar
quadrilateral drawn by an exact homography of its texture
(:func:`vision.render._leaning._face_texture`: pips at the layout of
:data:`vision.render._types.PIP_LAYOUTS`, opposite faces summing to 7). The
floor is a procedural wood, paper, felt or desk texture mapped through the
floor plane's homography (it shrinks and blurs into the distance as in a
photo); each die casts a soft shadow along the light; then lens blur, sensor
noise and JPEG compression.

- :func:`render_oblique_scene`: 2-6 dice lying flat, 28-70 px across, camera
  tilted `tilt_deg`.
- :func:`render_close_up`: one die whose box fills `share` (up to 0.9) of the
  picture's height, camera tilted `tilt_deg`.

Truth (:class:`vision.lab.perturb.Truth`): the value of the face pointing up
and the box of the whole projected cube (top and side faces), as DEV's labels.
Units: the die side is 1 world unit; x, y on the floor, z up; images are BGR.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision.lab.perturb import Perturbed, Truth
from vision.render._die import DieLook, Light, _side_values
from vision.render._leaning import _FACES, _face_texture, leaning_vertices, paste_face

__all__ = ["Camera", "visible_faces", "view_angle", "render_oblique_scene", "render_close_up", "LOOKS", "FLOORS"]

#: Die looks, (body, pip) BGR 0-1: ivory and white with black pips (the matteo webcam dice), then coloured.
LOOKS = (
    ((0.80, 0.90, 0.93), (0.08, 0.08, 0.08)),
    ((0.94, 0.95, 0.95), (0.10, 0.10, 0.12)),
    ((0.15, 0.15, 0.72), (0.95, 0.95, 0.95)),
    ((0.55, 0.35, 0.10), (0.95, 0.95, 0.95)),
    ((0.12, 0.12, 0.12), (0.92, 0.92, 0.92)),
    ((0.30, 0.62, 0.22), (0.95, 0.95, 0.95)),
    ((0.20, 0.75, 0.90), (0.10, 0.10, 0.10)),
)
#: Floors: name -> (base BGR 0-1, grain strength, stripe strength); the stripes are wood grain.
FLOORS = {
    "wood": ((0.62, 0.74, 0.82), 0.04, 0.04),
    "paper": ((0.88, 0.89, 0.90), 0.015, 0.0),
    "dark_felt": ((0.16, 0.15, 0.15), 0.06, 0.0),
    "green_felt": ((0.22, 0.42, 0.18), 0.06, 0.0),
    "grey_desk": ((0.52, 0.52, 0.54), 0.03, 0.0),
}


@dataclass(frozen=True)
class Camera:
    """A pinhole camera at height over the floor point (0, 0, 0), tilted `tilt_deg` from looking straight down.

    It looks at the origin from ``dist`` world units away, towards +y; image x is
    world +x, image y runs down the image. ``focal`` is in px; ``size`` is (W, H);
    the origin appears at the picture's middle plus ``offset`` px (an off-centre crop).
    """

    tilt_deg: float
    dist: float
    focal: float
    size: tuple[int, int]
    offset: tuple[float, float] = (0.0, 0.0)

    @property
    def axes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Centre C (3,), image right r, image down d, forward f: world vectors."""
        t = math.radians(self.tilt_deg)
        centre = np.array([0.0, -math.sin(t), math.cos(t)]) * self.dist
        return (
            centre,
            np.array([1.0, 0, 0]),
            np.array([0, -math.cos(t), -math.sin(t)]),
            np.array([0, math.sin(t), -math.cos(t)]),
        )

    def project(self, points: np.ndarray) -> np.ndarray:
        """Image points (N, 2) of world points (N, 3) (all in front of the camera)."""
        c, r, d, f = self.axes
        p = np.asarray(points, np.float64) - c
        z = p @ f
        cx, cy = self.size[0] / 2 + self.offset[0], self.size[1] / 2 + self.offset[1]
        return np.stack([cx + self.focal * (p @ r) / z, cy + self.focal * (p @ d) / z], axis=1)

    def floor_points(self, uv: np.ndarray) -> np.ndarray:
        """Floor points (N, 2) seen at image points (N, 2) (rays that meet the floor)."""
        c, r, d, f = self.axes
        cx, cy = self.size[0] / 2 + self.offset[0], self.size[1] / 2 + self.offset[1]
        uv = np.asarray(uv, np.float64)
        ray = f[None] + ((uv[:, :1] - cx) * r[None] + (uv[:, 1:2] - cy) * d[None]) / self.focal
        t = -c[2] / np.minimum(ray[:, 2], -1e-6)
        return (c[None] + t[:, None] * ray)[:, :2]


def _floor(cam: Camera, rng: np.random.Generator) -> np.ndarray:
    """The floor as seen by `cam`: float32 (H, W, 3) BGR 0-1, texture in floor units so it foreshortens."""
    w, h = cam.size
    name = list(FLOORS)[int(rng.integers(len(FLOORS)))]
    base, grain, stripes = FLOORS[name]
    # periodic noise (a low-passed random spectrum), so the tiles meet without seams
    fy, fx = np.meshgrid(np.fft.fftfreq(256), np.fft.fftfreq(256), indexing="ij")
    spectrum = rng.normal(0, 1, (256, 256)) + 1j * rng.normal(0, 1, (256, 256))
    noise = np.fft.ifft2(spectrum / (1 + (np.hypot(fx, fy) * 40) ** 2)).real
    noise = (noise / (noise.std() + 1e-9) + 0.3 * rng.normal(0, 1, (256, 256))).astype(np.float32)
    # floor points on a 4 px grid, interpolated (they vary smoothly over the picture)
    gy, gx = np.mgrid[0 : h + 4 : 4, 0 : w + 4 : 4].astype(np.float64)
    grid = cam.floor_points(np.stack([gx.ravel(), gy.ravel()], 1)).reshape(*gx.shape, 2).astype(np.float32)
    floor = cv2.resize(grid, (gx.shape[1] * 4, gx.shape[0] * 4), interpolation=cv2.INTER_LINEAR)[:h, :w]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    # one noise tile spans 8 die sides; wood's is drawn out 6 times along the grain (x)
    px, py = (48.0, 4.0) if stripes else (8.0, 8.0)
    mx = np.mod(floor[..., 0] / px, 1.0) * 255
    my = np.mod(floor[..., 1] / py, 1.0) * 255
    tex = cv2.remap(noise, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP)
    shade = 1 + grain * tex
    if stripes:
        freq = float(rng.uniform(2.0, 4.0))  # wood grain lines per die side
        shade += stripes * np.sin(freq * floor[..., 1] + 0.8 * tex)
    img = shade[..., None] * np.asarray(base, np.float32)[None, None]
    # light falls off away from the picture's middle (lamp and lens vignetting)
    r2 = ((xs - w / 2) ** 2 + (ys - h / 2) ** 2) / (w * w / 4 + h * h / 4)
    return (img * (1 - float(rng.uniform(0.05, 0.25)) * r2)[..., None]).astype(np.float32)


def _shadow(img: np.ndarray, cam: Camera, verts: np.ndarray, light: Light, strength: float) -> None:
    """Darken the floor under a die's cast shadow (vertices dropped along the light onto z = 0), in place."""
    lx, ly, lz = light.direction
    on_floor = np.column_stack([verts[:, :2] - np.outer(verts[:, 2] / max(lz, 0.25), [lx, ly]), np.zeros(len(verts))])
    hull = cv2.convexHull(cam.project(on_floor).astype(np.float32)).reshape(-1, 2)
    blur = 0.06 * float(np.ptp(hull, axis=0).max()) + 1.0
    x0, y0, x1, y1 = _roi(hull, 3 * blur + 2, img.shape)
    if x1 <= x0 or y1 <= y0:
        return
    m = np.zeros((y1 - y0, x1 - x0), np.float32)
    cv2.fillConvexPoly(m, np.round((hull - [x0, y0]) * 16).astype(np.int32), 1.0, cv2.LINE_AA, 4)
    img[y0:y1, x0:x1] *= (1 - strength * cv2.GaussianBlur(m, (0, 0), blur))[..., None]


def _roi(pts: np.ndarray, margin: float, shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """The pixel window (x0, y0, x1, y1) around points (N, 2) plus `margin` px, clipped to an image of `shape`."""
    x0, y0 = (int(max(math.floor(v - margin), 0)) for v in pts.min(axis=0))
    x1 = int(min(math.ceil(pts[:, 0].max() + margin), shape[1]))
    y1 = int(min(math.ceil(pts[:, 1].max() + margin), shape[0]))
    return x0, y0, x1, y1


def visible_faces(cam: Camera, verts: np.ndarray) -> list[tuple[tuple[int, int, int, int], int, np.ndarray]]:
    """The faces of a cube (8 world vertices) turned towards the camera: (vertex indices, face 0-5, unit normal).

    Face 0 is the one pointing up, 1-4 the sides (:data:`vision.render._leaning._FACES`), 5 the bottom.
    """
    centre, cpos, out = verts.mean(axis=0), cam.axes[0], []
    for idx, which in _FACES:
        fc = verts[list(idx)].mean(axis=0)
        n = (fc - centre) / (np.linalg.norm(fc - centre) + 1e-9)
        if float(np.dot(n, cpos - fc)) > 1e-9:
            out.append((idx, which, n))
    return out


def view_angle(cam: Camera, verts: np.ndarray) -> float:
    """Degrees between a flat die's top face normal (world up) and the ray from its centre to the camera."""
    top = verts[4:].mean(axis=0)  # vertices 4-7 are the top face (z = side)
    ray = cam.axes[0] - top
    return math.degrees(math.acos(min(1.0, float(ray[2] / np.linalg.norm(ray)))))


def _draw_die(img: np.ndarray, cam: Camera, verts: np.ndarray, look: DieLook, light: Light, value: int) -> None:
    """Draw a cube (8 world vertices of :func:`leaning_vertices`) face by face, in place."""
    pts = cam.project(verts)
    cpos = cam.axes[0]
    # the rounded edges between faces: the die's silhouette, its corners rounded, in the mean shade of its faces
    faces = visible_faces(cam, verts)
    shades = [float(light.shade(np.float64(n[0]), np.float64(n[1]), np.float64(n[2]))) for _, _, n in faces]
    edge = np.asarray(look.body, np.float32) * 0.9 * float(np.mean(shades))
    hull = cv2.convexHull(pts.astype(np.float32)).reshape(-1, 2)
    x0, y0, x1, y1 = _roi(hull, 2, img.shape)
    if x1 <= x0 or y1 <= y0:
        return
    m = np.zeros((y1 - y0, x1 - x0), np.float32)
    cv2.fillConvexPoly(m, np.round((hull - [x0, y0]) * 16).astype(np.int32), 1.0, cv2.LINE_AA, 4)
    r = int(round(look.corner * 0.5 * float(np.ptp(pts, axis=0).min())))
    if r >= 2:
        m = cv2.morphologyEx(m, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1)))
    roi = img[y0:y1, x0:x1]
    roi[:] = roi * (1 - m[..., None]) + edge[None, None] * m[..., None]
    a, b, c_, d = _side_values(value)
    values = (value, a, b, c_, d, 7 - value)
    side_px = float(np.ptp(pts, axis=0).max())
    size = int(min(512, max(64, 2 ** math.ceil(math.log2(max(side_px, 1.0))))))
    lv = np.asarray(light.direction, np.float64)
    for idx, which, n in faces:
        view = cpos - verts[list(idx)].mean(axis=0)
        tex, mask = _face_texture(look, values[which], size)
        half = lv + view / np.linalg.norm(view)
        spec = look.gloss * max(float(np.dot(n, half / np.linalg.norm(half))), 0.0) ** 30
        tex = tex * float(light.shade(np.float64(n[0]), np.float64(n[1]), np.float64(n[2]))) + spec
        paste_face(img, tex, mask, pts[list(idx)].astype(np.float32), cv2.INTER_AREA)


def _box(pts: np.ndarray, size: tuple[int, int]) -> tuple[int, int, int, int]:
    x0, y0 = np.floor(pts.min(axis=0)).astype(int)
    x1, y1 = np.ceil(pts.max(axis=0)).astype(int)
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, size[0]), min(y1, size[1])
    return int(x0), int(y0), int(x1 - x0), int(y1 - y0)


def _finish(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Lens blur, sensor noise and JPEG compression of a float image: uint8 BGR."""
    img = cv2.GaussianBlur(img, (0, 0), float(rng.uniform(0.5, 1.1)))
    img = img + rng.normal(0, float(rng.uniform(0.005, 0.02)), img.shape).astype(np.float32)
    out = np.clip(img * 255 + 0.5, 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(70, 93))])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


def _look_and_light(rng: np.random.Generator) -> tuple[DieLook, Light]:
    body, pip = LOOKS[int(rng.integers(len(LOOKS)))]
    look = DieLook(body, pip, pip_radius=float(rng.uniform(0.08, 0.105)), gloss=float(rng.uniform(0.05, 0.3)))
    d = np.array([rng.uniform(-0.6, 0.6), rng.uniform(-0.6, 0.6), 1.0])
    return look, Light(tuple(float(v) for v in d / np.linalg.norm(d)), ambient=float(rng.uniform(0.35, 0.6)))


def _cube(x: float, y: float, yaw: float) -> np.ndarray:
    """The 8 world vertices of a die of side 1 lying flat with its footprint centred on (x, y)."""
    return leaning_vertices((x, y), 1.0, yaw, 0.0)


def render_oblique_scene(
    seed: int, tilt_deg: float, size: tuple[int, int] = (640, 480), angles: tuple[float, float] = (0.0, 90.0)
) -> Perturbed:
    """2-6 dice lying flat, seen by a camera tilted `tilt_deg` (0-65) from the vertical.

    The dice are about 28-70 px across, none cut by the border, their boxes
    apart, each placed only where its top face is seen at a :func:`view_angle`
    within `angles` (degrees). Same seed, same picture; ``applied`` is False
    when fewer than 2 dice found room.
    """
    if not 0 <= tilt_deg <= 65:
        raise ValueError(f"tilt_deg must be 0-65 degrees, got {tilt_deg!r}")
    rng = np.random.default_rng(seed)
    w, h = size
    focal = w * float(rng.uniform(0.85, 1.3))
    cam = Camera(tilt_deg, focal / float(rng.uniform(28, 70)), focal, size)
    img = _floor(cam, rng)
    look, light = _look_and_light(rng)
    n = int(rng.integers(2, 7))
    dice: list[tuple[np.ndarray, int, tuple[int, int, int, int]]] = []
    for _ in range(200):
        if len(dice) == n:
            break
        uv = np.array([[rng.uniform(0.1 * w, 0.9 * w), rng.uniform(0.12 * h, 0.9 * h)]])
        x, y = cam.floor_points(uv)[0]
        verts = _cube(float(x), float(y), float(rng.uniform(0, 90)))
        pts = cam.project(verts)
        if pts.min() < 2 or pts[:, 0].max() > w - 2 or pts[:, 1].max() > h - 2:
            continue
        if not angles[0] <= view_angle(cam, verts) <= angles[1]:
            continue
        bx, by, bw, bh = _box(pts, size)
        grown = (bx - 0.15 * bw, by - 0.15 * bh, 1.3 * bw, 1.3 * bh)
        if any(_overlap(grown, o[2]) for o in dice) or bw < 12:
            continue
        dice.append((verts, int(rng.integers(1, 7)), (bx, by, bw, bh)))
    strength = float(rng.uniform(0.2, 0.5))
    for verts, _, _ in dice:
        _shadow(img, cam, verts, light, strength)
    cpos = cam.axes[0]
    for verts, value, _ in sorted(dice, key=lambda t: -float(np.linalg.norm(t[0].mean(axis=0) - cpos))):
        _draw_die(img, cam, verts, look, light, value)
    return Perturbed(_finish(img, rng), tuple(Truth(v, b) for _, v, b in dice), applied=len(dice) >= 2)


def _overlap(a, b) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def render_close_up(
    seed: int,
    tilt_deg: float,
    share: float,
    size: tuple[int, int] = (640, 480),
    angles: tuple[float, float] = (0.0, 90.0),
) -> Perturbed:
    """One die whose box is `share` (0.1-0.95) of the picture's height, camera tilted `tilt_deg` (0-65).

    ``applied`` is False when the die is not whole in the picture or its top
    face is seen at a :func:`view_angle` outside `angles` (degrees).
    """
    if not 0.1 <= share <= 0.95:
        raise ValueError(f"share must be 0.1-0.95 of the picture, got {share!r}")
    rng = np.random.default_rng(seed)
    w, h = size
    focal = w * float(rng.uniform(0.85, 1.3))
    yaw = float(rng.uniform(0, 90))
    verts = _cube(0.0, 0.0, yaw)
    cam = Camera(tilt_deg, 10.0, focal, size)
    for _ in range(3):  # the box shrinks about as 1 / distance: rescale to the wanted share
        bh = float(np.ptp(cam.project(verts)[:, 1]))
        cam = Camera(tilt_deg, max(cam.dist * bh / (share * h), 1.8), focal, size)
    pts = cam.project(verts)
    # move the die off the middle as far as the picture allows (a hand-held close-up is rarely centred)
    lo, hi = -pts.min(axis=0) + 2, np.array([w, h]) - pts.max(axis=0) - 2
    shift = [float(rng.uniform(lo[k], hi[k])) if lo[k] <= hi[k] else float(lo[k] + hi[k]) / 2 for k in range(2)]
    cam = Camera(tilt_deg, cam.dist, focal, size, (shift[0], shift[1]))
    img = _floor(cam, rng)
    look, light = _look_and_light(rng)
    value = int(rng.integers(1, 7))
    _shadow(img, cam, verts, light, float(rng.uniform(0.2, 0.5)))
    _draw_die(img, cam, verts, look, light, value)
    pts = cam.project(verts)
    whole = bool(pts.min() >= 0 and (pts <= np.array([w, h])).all())
    whole = whole and angles[0] <= view_angle(cam, verts) <= angles[1]
    return Perturbed(_finish(img, rng), (Truth(value, _box(pts, size)),), applied=whole)

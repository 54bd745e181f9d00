#!/usr/bin/python3
"""Writes the stored batch-1 inputs of the reference model set as .npy into a folder.

    /usr/bin/python3 tools/make_inputs.py OUT_DIR

Everything is drawn or computed here, deterministically (no download, no randomness
without a fixed seed), with Debian's numpy and PIL and the DejaVu font; tools/models.json
pins each file's SHA-256, so a change in any of them shows at preparation time.

- image_224.npy      f32[1,3,224,224]  a drawn scene, ImageNet mean/std (resnet50, mobilenet)
- doc_640.npy        f32[1,3,640,640]  a page with three text lines, ImageNet mean/std (dbnet)
- textline_48x320.npy f32[1,3,48,320]  one text line, (x/255-0.5)/0.5 (crnn)
- textline_48x192.npy f32[1,3,48,192]  the same line for the direction classifier (ocr_cls)
- calib_224_{1,2}.npy f32[1,3,224,224] the scene plus seeded noise: calibration only
- image_1024.npy     f32[1,3,1024,1024] the scene at 1024, (x/255-0.5)/1 (isnet)
- bert_input_ids.npy, bert_attention_mask.npy, bert_token_type_ids.npy  i64[1,128]:
  [CLS], 100 seeded word-piece ids, [SEP], then padding masked out (bert_base, minilm_l6)
- mel_80x3000.npy    f32[1,80,3000] Whisper's log-mel features of 30 s of a synthetic
  voiced signal (a gliding harmonic tone with vowel-like formants and pauses)
"""
import os
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFont

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
TEXT_LINES = ["OneModel exact mode", "same bits everywhere", "golden rows 2026"]
IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def scene(size):
    """A deterministic picture: a sky gradient, a sun, a house, a tree."""
    s = size / 224.0
    img = Image.new("RGB", (size, size))
    d = ImageDraw.Draw(img)
    for y in range(size):
        t = y / (size - 1)
        d.line([(0, y), (size, y)], fill=(int(90 + 120 * t), int(150 + 60 * t), int(230 - 80 * t)))
    d.rectangle([0, int(160 * s), size, size], fill=(70, 140, 60))
    d.ellipse([int(160 * s), int(20 * s), int(200 * s), int(60 * s)], fill=(250, 220, 80))
    d.rectangle([int(40 * s), int(100 * s), int(120 * s), int(170 * s)], fill=(180, 70, 50))
    d.polygon([(int(30 * s), int(100 * s)), (int(80 * s), int(60 * s)), (int(130 * s), int(100 * s))], fill=(110, 40, 30))
    d.rectangle([int(70 * s), int(130 * s), int(90 * s), int(170 * s)], fill=(60, 40, 30))
    d.rectangle([int(165 * s), int(110 * s), int(175 * s), int(170 * s)], fill=(90, 60, 30))
    d.ellipse([int(145 * s), int(70 * s), int(195 * s), int(125 * s)], fill=(40, 110, 40))
    return img


def to_chw(img, mean, std):
    x = np.asarray(img, dtype=np.float32) / np.float32(255.0)
    x = (x - mean) / std
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None].astype(np.float32))


def text_line(width, height, text):
    """Black text on white, 32 px DejaVu Sans, left-aligned and vertically centred."""
    font = ImageFont.truetype(FONT, 32)
    img = Image.new("RGB", (width, height), (255, 255, 255))
    d = ImageDraw.Draw(img)
    box = d.textbbox((0, 0), text, font=font)
    w, h = box[2] - box[0], box[3] - box[1]
    if w > width - 8:  # shrink to fit, as an OCR pipeline resizes a crop
        big = Image.new("RGB", (w + 8, height), (255, 255, 255))
        ImageDraw.Draw(big).text((4 - box[0], (height - h) // 2 - box[1]), text, font=font, fill=(0, 0, 0))
        return big.resize((width, height), Image.BILINEAR)
    d.text((4 - box[0], (height - h) // 2 - box[1]), text, font=font, fill=(0, 0, 0))
    return img


def document(size):
    font = ImageFont.truetype(FONT, 40)
    img = Image.new("RGB", (size, size), (245, 245, 240))
    d = ImageDraw.Draw(img)
    for i, line in enumerate(TEXT_LINES):
        d.text((40, 120 + i * 150), line, font=font, fill=(20, 20, 20))
    return img


def mel_features():
    """Whisper's log_mel_spectrogram recipe in numpy: 16 kHz, 25 ms Hann window
    (n_fft 400), 10 ms hop, |STFT|^2 through 80 Slaney mel filters, log10 clamped at
    1e-10 and at 8 below the maximum, then (x + 4) / 4; 3000 frames."""
    sr, n_fft, hop, n_mels = 16000, 400, 160, 80
    n = 30 * sr
    t = np.arange(n, dtype=np.float64) / sr
    f0 = 120 + 40 * np.sin(2 * np.pi * 0.3 * t)  # a gliding pitch
    phase = 2 * np.pi * np.cumsum(f0) / sr
    sig = np.zeros(n)
    for k in range(1, 25):  # harmonics shaped by two formants
        fk = k * f0
        amp = np.exp(-((fk - 700) / 300) ** 2) + 0.6 * np.exp(-((fk - 1200) / 400) ** 2) + 0.05
        sig += amp * np.sin(k * phase) / k
    env = (np.sin(2 * np.pi * 0.5 * t) > -0.3).astype(np.float64)  # syllables and pauses
    sig = 0.3 * sig * env / np.max(np.abs(sig))
    pad = np.pad(sig, (n_fft // 2, n_fft // 2), mode="reflect")
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft)
    frames = np.lib.stride_tricks.sliding_window_view(pad, n_fft)[::hop][:3000]
    power = np.abs(np.fft.rfft(frames * window, axis=1)) ** 2  # [3000, 201]

    def hz_to_mel(f):  # Slaney's scale
        f = np.asarray(f, dtype=np.float64)
        lin = f / (200.0 / 3)
        log = 15.0 + np.log(np.maximum(f, 1e-10) / 1000.0) / (np.log(6.4) / 27.0)
        return np.where(f >= 1000.0, log, lin)

    def mel_to_hz(m):
        m = np.asarray(m, dtype=np.float64)
        lin = m * (200.0 / 3)
        log = 1000.0 * np.exp((np.log(6.4) / 27.0) * (m - 15.0))
        return np.where(m >= 15.0, log, lin)

    fft_freqs = np.linspace(0, sr / 2, n_fft // 2 + 1)
    pts = mel_to_hz(np.linspace(hz_to_mel(0.0), hz_to_mel(sr / 2), n_mels + 2))
    fb = np.zeros((n_mels, len(fft_freqs)))
    for i in range(n_mels):
        lo, c, hi = pts[i], pts[i + 1], pts[i + 2]
        fb[i] = np.maximum(0, np.minimum((fft_freqs - lo) / (c - lo), (hi - fft_freqs) / (hi - c)))
        fb[i] *= 2.0 / (hi - lo)
    logmel = np.log10(np.maximum(fb @ power.T, 1e-10))
    logmel = np.maximum(logmel, logmel.max() - 8.0)
    return ((logmel + 4.0) / 4.0).astype(np.float32)[None]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_inputs.py OUT_DIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    def save(name, a):
        np.save(os.path.join(out, name + ".npy"), np.ascontiguousarray(a))

    save("image_224", to_chw(scene(224), IMAGENET_MEAN, IMAGENET_STD))
    save("image_1024", to_chw(scene(1024), np.float32(0.5), np.float32(1.0)))
    save("doc_640", to_chw(document(640), IMAGENET_MEAN, IMAGENET_STD))
    save("textline_48x320", to_chw(text_line(320, 48, TEXT_LINES[0]), np.float32(0.5), np.float32(0.5)))
    save("textline_48x192", to_chw(text_line(192, 48, TEXT_LINES[0]), np.float32(0.5), np.float32(0.5)))
    # Calibration images for the static QDQ quantiser: the scene plus seeded noise.
    crng = np.random.default_rng(224)
    base = to_chw(scene(224), IMAGENET_MEAN, IMAGENET_STD)
    for k in range(1, 3):
        save(f"calib_224_{k}", (base + crng.normal(0.0, 0.5, base.shape)).astype(np.float32))
    rng = np.random.default_rng(20261129)
    ids = np.zeros((1, 128), dtype=np.int64)
    ids[0, 0] = 101  # [CLS]
    ids[0, 1:101] = rng.integers(1996, 30522, size=100)  # word pieces past the special tokens
    ids[0, 101] = 102  # [SEP]
    mask = (ids != 0).astype(np.int64)
    save("bert_input_ids", ids)
    save("bert_attention_mask", mask)
    save("bert_token_type_ids", np.zeros_like(ids))
    save("mel_80x3000", mel_features())


if __name__ == "__main__":
    main()

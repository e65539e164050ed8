//! Measures of recorded sound ([`crate::emulator::Emulator::take_audio`]: stereo `[left, right]` samples, 16-bit
//! signed) for the tests, and WAV files to listen to.
//!
//! Each measure takes a stretch of stereo samples and looks at both channels: the game's mixer may put a voice on
//! one side only.

use std::io::Write;
use std::path::Path;

/// The root mean square of every sample of both channels, in sample units (a full-scale square wave is 32,767,
/// silence 0). Empty: 0.
pub fn rms(samples: &[[i16; 2]]) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    let sum: f64 = samples.iter().flatten().map(|&s| f64::from(s) * f64::from(s)).sum();
    (sum / (2 * samples.len()) as f64).sqrt()
}

/// The largest difference between one sample and the next on either channel: a click, or a sample lost or
/// repeated in a smooth signal, shows as a step larger than the signal's own.
pub fn largest_step(samples: &[[i16; 2]]) -> u32 {
    samples
        .windows(2)
        .flat_map(|w| (0..2).map(move |ch| (i32::from(w[1][ch]) - i32::from(w[0][ch])).unsigned_abs()))
        .max()
        .unwrap_or(0)
}

/// How alike two recordings are, as the best normalised cross-correlation of `a` with `b` shifted by at most
/// `max_lag` samples either way (both channels, DC removed): 1 for the same sound, about 0 for unrelated ones.
/// The same music recorded twice seldom lines up to the sample (the emulator's 32,768 Hz output does not start
/// each frame on a sample), hence the lag. Over the overlap only; 0 if either is silent there.
pub fn likeness(a: &[[i16; 2]], b: &[[i16; 2]], max_lag: usize) -> f64 {
    let centred = |s: &[[i16; 2]]| -> Vec<f64> {
        let flat: Vec<f64> = s.iter().flatten().map(|&v| f64::from(v)).collect();
        let mean = flat.iter().sum::<f64>() / flat.len().max(1) as f64;
        flat.iter().map(|v| v - mean).collect()
    };
    let (a, b) = (centred(a), centred(b));
    let correlation = |x: &[f64], y: &[f64]| {
        let n = x.len().min(y.len());
        let (x, y) = (&x[..n], &y[..n]);
        let dot: f64 = x.iter().zip(y).map(|(p, q)| p * q).sum();
        let power = (x.iter().map(|p| p * p).sum::<f64>() * y.iter().map(|q| q * q).sum::<f64>()).sqrt();
        if power == 0.0 { 0.0 } else { dot / power }
    };
    // A lag of one stereo sample is two values of the flattened signals.
    (0..=max_lag)
        .flat_map(|lag| {
            [correlation(&a[2 * lag.min(a.len() / 2)..], &b), correlation(&a, &b[2 * lag.min(b.len() / 2)..])]
        })
        .fold(0.0, f64::max)
}

/// The frequency in Hz with the most energy in the stretch (both channels summed, DC removed), from a DFT of
/// its first 2^k samples (at most 65,536: two seconds), Hann-windowed, with the peak placed between bins by a
/// parabola through the logarithms of the three largest (exact for the window's Gaussian-like peak to well
/// under 1 % of a pure tone's frequency from four bins up). `None` for fewer than 64 samples or a constant
/// signal.
pub fn dominant_frequency(samples: &[[i16; 2]], rate: u32) -> Option<f64> {
    if samples.len() < 64 {
        return None;
    }
    let n = (1usize << samples.len().ilog2()).min(1 << 16);
    let mono: Vec<f64> = samples[..n].iter().map(|&[l, r]| f64::from(l) + f64::from(r)).collect();
    let mean = mono.iter().sum::<f64>() / n as f64;
    let mut bins: Vec<(f64, f64)> = mono
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let hann = 0.5 - 0.5 * (std::f64::consts::TAU * i as f64 / n as f64).cos();
            ((s - mean) * hann, 0.0)
        })
        .collect();
    fft(&mut bins);
    let magnitude: Vec<f64> = bins[..n / 2].iter().map(|&(re, im)| re.hypot(im)).collect();
    // Bin 0 is what is left of the DC; the peak needs a neighbour on each side.
    let (peak, &largest) =
        magnitude[1..n / 2 - 1].iter().enumerate().map(|(i, m)| (i + 1, m)).max_by(|a, b| a.1.total_cmp(b.1))?;
    // A constant signal leaves only rounding error (the window's sum is n/2, a unit tone's peak n/4).
    if largest < 1e-6 * n as f64 {
        return None;
    }
    let ln = |k: usize| (magnitude[k] + 1e-12).ln();
    let (a, b, c) = (ln(peak - 1), ln(peak), ln(peak + 1));
    let curvature = a - 2.0 * b + c;
    let offset = if curvature < 0.0 { 0.5 * (a - c) / curvature } else { 0.0 };
    Some((peak as f64 + offset) * f64::from(rate) / n as f64)
}

/// An in-place radix-2 FFT (decimation in time) of a power-of-two number of complex values `(re, im)`.
fn fft(x: &mut [(f64, f64)]) {
    let n = x.len();
    debug_assert!(n.is_power_of_two());
    let mut j = 0;
    for i in 1..n {
        let mut bit = n >> 1;
        while j & bit != 0 {
            j ^= bit;
            bit >>= 1;
        }
        j |= bit;
        if i < j {
            x.swap(i, j);
        }
    }
    let mut len = 2;
    while len <= n {
        let angle = -std::f64::consts::TAU / len as f64;
        for start in (0..n).step_by(len) {
            for k in 0..len / 2 {
                let (wr, wi) = ((angle * k as f64).cos(), (angle * k as f64).sin());
                let (a, b) = (x[start + k], x[start + k + len / 2]);
                let t = (b.0 * wr - b.1 * wi, b.0 * wi + b.1 * wr);
                x[start + k] = (a.0 + t.0, a.1 + t.1);
                x[start + k + len / 2] = (a.0 - t.0, a.1 - t.1);
            }
        }
        len <<= 1;
    }
}

/// The stretch as a WAV file's bytes: RIFF, 16-bit stereo PCM at `rate`, little-endian, left first. Written by
/// hand: the 44-byte header is all the format needs, and no crate is needed for it.
pub fn wav_bytes(samples: &[[i16; 2]], rate: u32) -> Result<Vec<u8>, String> {
    let data = u32::try_from(samples.len() * 4)
        .ok()
        .filter(|&d| d <= u32::MAX - 36)
        .ok_or("too many samples for a WAV file (4 GB)")?;
    let mut out = Vec::with_capacity(44 + data as usize);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes()); // the size of the format chunk that follows
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&2u16.to_le_bytes()); // channels
    out.extend_from_slice(&rate.to_le_bytes());
    out.extend_from_slice(&(rate * 4).to_le_bytes()); // bytes a second
    out.extend_from_slice(&4u16.to_le_bytes()); // bytes a sample of both channels
    out.extend_from_slice(&16u16.to_le_bytes()); // bits a sample
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data.to_le_bytes());
    for &[l, r] in samples {
        out.extend_from_slice(&l.to_le_bytes());
        out.extend_from_slice(&r.to_le_bytes());
    }
    Ok(out)
}

/// Writes the stretch to `path` as a WAV file ([`wav_bytes`]).
pub fn write_wav(path: &Path, samples: &[[i16; 2]], rate: u32) -> Result<(), String> {
    let bytes = wav_bytes(samples, rate)?;
    let mut file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    file.write_all(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATE: u32 = 32_768;

    /// `n` samples of a sine of `hz` at `amplitude`, the same on both channels.
    fn sine(hz: f64, amplitude: f64, n: usize) -> Vec<[i16; 2]> {
        (0..n)
            .map(|i| {
                let s = (amplitude * (std::f64::consts::TAU * hz * i as f64 / f64::from(RATE)).sin()).round() as i16;
                [s, s]
            })
            .collect()
    }

    /// A square wave of `hz`, between `low` and `high`, on the left channel only.
    fn square_left(hz: f64, low: i16, high: i16, n: usize) -> Vec<[i16; 2]> {
        (0..n).map(|i| [if (i as f64 * hz / f64::from(RATE)).fract() < 0.5 { high } else { low }, 0]).collect()
    }

    #[test]
    fn likeness_finds_the_same_sound_shifted_and_tells_apart_others() {
        let a = sine(2000.0, 8000.0, 8192);
        let shifted: Vec<[i16; 2]> = a[5..].to_vec();
        assert!(likeness(&a, &a, 0) > 0.999);
        assert!(likeness(&a, &shifted, 8) > 0.999, "{}", likeness(&a, &shifted, 8));
        assert!(likeness(&shifted, &a, 8) > 0.999, "{}", likeness(&shifted, &a, 8));
        // Outside the lag allowed: 3 samples left over at 2 kHz are 0.18 of a turn, a correlation of cos 66°.
        assert!(likeness(&a, &shifted, 2) < 0.9, "{}", likeness(&a, &shifted, 2));
        let other = sine(2617.0, 8000.0, 8192);
        assert!(likeness(&a, &other, 8) < 0.2, "{}", likeness(&a, &other, 8));
        assert_eq!(likeness(&a, &[[0, 0]; 8192], 8), 0.0);
    }

    #[test]
    fn rms_of_silence_a_square_and_a_sine() {
        assert_eq!(rms(&[]), 0.0);
        assert_eq!(rms(&[[0, 0]; 100]), 0.0);
        // ±1,000 on both channels: 1,000; on one channel only: the other's silence halves the power.
        let square: Vec<[i16; 2]> = (0..100).map(|i| if i % 2 == 0 { [1000, -1000] } else { [-1000, 1000] }).collect();
        assert_eq!(rms(&square), 1000.0);
        let one_side: Vec<[i16; 2]> = square.iter().map(|&[l, _]| [l, 0]).collect();
        assert!((rms(&one_side) - 1000.0 / 2f64.sqrt()).abs() < 1e-9, "{}", rms(&one_side));
        // A sine over whole periods: amplitude / √2.
        let s = rms(&sine(512.0, 10_000.0, 32_768));
        assert!((s - 10_000.0 / 2f64.sqrt()).abs() < 1.0, "{s}");
    }

    #[test]
    fn largest_step_on_either_channel() {
        assert_eq!(largest_step(&[]), 0);
        assert_eq!(largest_step(&[[5, 5]]), 0);
        assert_eq!(largest_step(&[[0, 0], [3, -2], [4, 7], [4, 7]]), 9);
        // Extremes do not overflow: from the most negative sample to the most positive, on the right.
        assert_eq!(largest_step(&[[0, i16::MIN], [1, i16::MAX]]), 65_535);
        // A smooth sine's largest step is about its slope's peak, 2π·f/rate·A; a repeated sample is 0, a lost
        // one shows up as up to twice that.
        let s = sine(100.0, 20_000.0, 4096);
        let slope = std::f64::consts::TAU * 100.0 / f64::from(RATE) * 20_000.0;
        assert!((f64::from(largest_step(&s)) - slope).abs() < 2.0, "{} vs {slope}", largest_step(&s));
    }

    #[test]
    fn dominant_frequency_of_pure_tones_within_one_percent() {
        for hz in [60.0, 110.0, 440.0, 1234.5, 7000.0, 13_000.0] {
            for n in [2048, 8192, 20_000] {
                let f = dominant_frequency(&sine(hz, 8000.0, n), RATE).unwrap();
                assert!((f - hz).abs() < hz * 0.01, "{hz} Hz over {n} samples: {f} Hz");
            }
        }
    }

    #[test]
    fn dominant_frequency_ignores_dc_harmonics_and_silence() {
        // The GBA's PSG: a square wave off zero, on one side. Its fundamental dominates its odd harmonics.
        let f = dominant_frequency(&square_left(524.288, 100, 4000, 16_384), RATE).unwrap();
        assert!((f - 524.288).abs() < 5.24, "{f}");
        // A loud DC offset under a quiet tone.
        let offset: Vec<[i16; 2]> = sine(2000.0, 50.0, 4096).iter().map(|&[l, r]| [l + 20_000, r + 20_000]).collect();
        let f = dominant_frequency(&offset, RATE).unwrap();
        assert!((f - 2000.0).abs() < 20.0, "{f}");
        assert_eq!(dominant_frequency(&[[0, 0]; 4096], RATE), None);
        assert_eq!(dominant_frequency(&[[-300, 77]; 4096], RATE), None);
        assert_eq!(dominant_frequency(&sine(440.0, 8000.0, 63), RATE), None);
    }

    #[test]
    fn wav_header_and_samples_byte_for_byte() {
        let bytes = wav_bytes(&[[1, -1], [0x1234, i16::MIN]], 32_768).unwrap();
        #[rustfmt::skip]
        let expected: [u8; 52] = [
            b'R', b'I', b'F', b'F', 44, 0, 0, 0, b'W', b'A', b'V', b'E',
            b'f', b'm', b't', b' ', 16, 0, 0, 0, 1, 0, 2, 0,
            0x00, 0x80, 0, 0, 0x00, 0x00, 2, 0, 4, 0, 16, 0, // 32,768 Hz; 131,072 bytes a second
            b'd', b'a', b't', b'a', 8, 0, 0, 0,
            1, 0, 0xFF, 0xFF, 0x34, 0x12, 0x00, 0x80,
        ];
        assert_eq!(bytes, expected);
        let path = std::env::temp_dir().join(format!("harness-audio-test-{}.wav", std::process::id()));
        write_wav(&path, &[[1, -1], [0x1234, i16::MIN]], 32_768).unwrap();
        let written = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(written, expected);
    }
}

//! The mixer's inner loops, timed: the test runner prints each test's cycles (`@@ok`).

use crate::mixer::{SAMPLES, mix_frame_of};

static RAMP: [i8; 256] = {
    let mut r = [0i8; 256];
    let mut k = 0;
    while k < 256 {
        r[k] = (k as i32 - 128) as i8;
        k += 1;
    }
    r
};

#[test_case]
fn mixes_a_frame_of_one_voice() {
    let sum = mix_frame_of(&RAMP, 1 << 12);
    assert_ne!(sum, 0, "{SAMPLES} samples mixed");
}

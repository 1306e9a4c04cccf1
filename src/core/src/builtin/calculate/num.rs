//! Values: an exact rational, or an approximation (a rational within 2^-170 relative of the
//! true value) once an irrational function has been taken. Exact values are bounded in size
//! (`MAX_BITS` for numerator and denominator) and refused past it, so nothing runs unbounded.
//! The irrational functions run in binary fixed point over big integers with 256 bits or more.

use super::parse::Func;
use super::{Answer, CalcError};
use crate::issue::Code;
use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

/// The digits an inexact answer is given to (rounded half away from zero).
pub const SIGNIFICANT_DIGITS: usize = 30;

/// The most bits an exact numerator or denominator holds (about 1233 decimal digits).
pub const MAX_BITS: u64 = 4096;

/// The bits an approximation keeps: about 51 digits, 21 more than shown.
const WORK_BITS: u64 = 170;

/// The fixed-point bits the series run with.
const SERIES_BITS: u64 = 256;

/// An approximation also carries a bound on its error: |true − v| ≤ 2^err. The bound follows
/// each step (rounding, the functions' own error, and how each operation carries its operands'
/// errors), so cancellation (`sqrt(2) - 1.414...`) shows as digits lost, and a whole number
/// taken from an approximation is exact only when the bound says it cannot be another.
#[derive(Clone, Debug)]
pub struct Val {
    v: BigRational,
    exact: bool,
    /// log2 of the error bound; meaningful only when not exact.
    err: i64,
}

/// "No error": below any bound that matters, and far from overflowing when added to.
const NONE: i64 = i64::MIN / 4;

/// An upper bound of log2 |v| (`NONE` for zero).
fn hi(v: &BigRational) -> i64 {
    if v.is_zero() {
        NONE
    } else {
        magnitude(v) + 1
    }
}

/// A lower bound of log2 |v| (`NONE` for zero).
fn lo(v: &BigRational) -> i64 {
    if v.is_zero() {
        NONE
    } else {
        magnitude(v) - 1
    }
}

/// 2^e for any whole e.
fn p2(e: i64) -> BigRational {
    if e >= 0 {
        BigRational::from_integer(pow2(e as u64))
    } else {
        BigRational::from_integer(pow2(e.unsigned_abs())).recip()
    }
}

fn lost(pos: usize, what: &str) -> CalcError {
    err(
        Code::Precision,
        pos,
        format!("{what}: the approximations here cancel or blur so far that no digit of the result is certain (write the exact value, or rearrange to avoid subtracting nearly equal approximations)"),
    )
}

fn err(code: Code, pos: usize, message: impl Into<String>) -> CalcError {
    CalcError::new(code, pos, message)
}

fn pow2(k: u64) -> BigInt {
    BigInt::one() << k
}

/// log2 of |v|, roughly (within one).
fn magnitude(v: &BigRational) -> i64 {
    v.numer().bits() as i64 - v.denom().bits() as i64
}

/// Rounds |v| to `WORK_BITS` significant bits (keeping the sign).
fn approximate(v: BigRational) -> BigRational {
    if v.is_zero() {
        return v;
    }
    let k = WORK_BITS as i64 - magnitude(&v) + 1;
    let scaled = if k >= 0 {
        v * BigRational::from_integer(pow2(k as u64))
    } else {
        v / BigRational::from_integer(pow2((-k) as u64))
    };
    let m = scaled.round();
    if k >= 0 {
        m / BigRational::from_integer(pow2(k as u64))
    } else {
        m * BigRational::from_integer(pow2((-k) as u64))
    }
}

impl Val {
    pub fn exact(v: BigRational, pos: usize) -> Result<Val, CalcError> {
        Val {
            v,
            exact: true,
            err: NONE,
        }
        .checked(pos)
    }

    /// A value computed from operands whose error (when not exact) is at most 2^err; rounding
    /// an approximation to `WORK_BITS` adds its own.
    fn made(v: BigRational, exact: bool, err: i64, pos: usize) -> Result<Val, CalcError> {
        if exact {
            return Val::exact(v, pos);
        }
        let err = err.max(hi(&v) - WORK_BITS as i64) + 1;
        Val {
            v: approximate(v),
            exact: false,
            err,
        }
        .checked(pos)
    }

    /// The error bound in log2 (`NONE` when exact).
    fn e(&self) -> i64 {
        if self.exact {
            NONE
        } else {
            self.err
        }
    }

    /// An upper bound of log2 of the true value's size.
    fn bound(&self) -> i64 {
        hi(&self.v).max(self.e()) + 1
    }

    /// log2 of a bound on the relative error, or refused when the value may be zero.
    fn relative(&self, pos: usize, what: &str) -> Result<i64, CalcError> {
        if self.exact {
            return Ok(NONE);
        }
        if self.v.is_zero() || self.err >= lo(&self.v) - 1 {
            return Err(lost(pos, what));
        }
        Ok(self.err - lo(&self.v) + 1)
    }

    /// Refuses a value past the size bound.
    fn checked(self, pos: usize) -> Result<Val, CalcError> {
        if self.v.numer().bits() > MAX_BITS || self.v.denom().bits() > MAX_BITS {
            let what = if magnitude(&self.v) > MAX_BITS as i64 / 2 {
                "too large"
            } else if magnitude(&self.v) < -(MAX_BITS as i64) / 2 {
                "too small"
            } else {
                "too long a fraction"
            };
            return Err(err(
                Code::Range,
                pos,
                format!("the value here is {what}: exact values are kept to {MAX_BITS} bits (about 1200 digits) of numerator and denominator, and refused past that rather than left to grow"),
            ));
        }
        Ok(self)
    }

    pub fn neg(self, pos: usize) -> Result<Val, CalcError> {
        Val::made(-self.v, self.exact, self.err, pos)
    }

    pub fn add(&self, b: &Val, pos: usize) -> Result<Val, CalcError> {
        let e = self.e().max(b.e()) + 1;
        Val::made(&self.v + &b.v, self.exact && b.exact, e, pos)
    }

    pub fn sub(&self, b: &Val, pos: usize) -> Result<Val, CalcError> {
        let e = self.e().max(b.e()) + 1;
        Val::made(&self.v - &b.v, self.exact && b.exact, e, pos)
    }

    /// ab − AB = a(b − B) + B(a − A).
    pub fn mul(&self, b: &Val, pos: usize) -> Result<Val, CalcError> {
        let e = (self.bound() + b.e()).max(hi(&b.v) + self.e()) + 1;
        Val::made(&self.v * &b.v, self.exact && b.exact, e, pos)
    }

    /// The error bound of A/B: a/b − A/B = (a − A)/b + A(B − b)/(bB), with |b| ≥ |B|/2.
    fn quotient_err(&self, b: &Val, pos: usize) -> Result<i64, CalcError> {
        if self.exact && b.exact {
            return Ok(NONE);
        }
        b.relative(pos, "the divisor")?;
        let low = lo(&b.v) - 1;
        Ok((self.e() - low).max(hi(&self.v) + b.e() - low - lo(&b.v)) + 1)
    }

    pub fn div(&self, b: &Val, pos: usize) -> Result<Val, CalcError> {
        if b.v.is_zero() {
            return Err(err(Code::Range, pos, "division by zero"));
        }
        let e = self.quotient_err(b, pos)?;
        Val::made(&self.v / &b.v, self.exact && b.exact, e, pos)
    }

    /// The remainder of truncated division: its sign is the dividend's (`-7 % 3` is -1).
    pub fn rem(&self, b: &Val, pos: usize) -> Result<Val, CalcError> {
        if b.v.is_zero() {
            return Err(err(Code::Range, pos, "% by zero"));
        }
        let ratio = &self.v / &b.v;
        let q = ratio.trunc();
        let exact = self.exact && b.exact;
        let mut e = NONE;
        if !exact {
            // The quotient's whole part must be certain, or the remainder is off by b.
            let qe = self.quotient_err(b, pos)?;
            let f = (&ratio - &q).abs();
            let d = f.clone().min(BigRational::one() - f);
            if d <= p2(qe + 1) {
                return Err(lost(pos, "the whole quotient of this %"));
            }
            e = self.e().max(hi(&q) + b.e()) + 1;
        }
        Val::made(&self.v - &b.v * q, exact, e, pos)
    }

    pub fn pow(&self, b: &Val, pos: usize) -> Result<Val, CalcError> {
        if b.exact && b.v.is_integer() {
            return self.whole_power(b.v.numer(), pos);
        }
        if self.v.is_negative() {
            return Err(err(
                Code::Range,
                pos,
                "a negative number to a fractional power is not a real number",
            ));
        }
        if self.v.is_zero() {
            return if b.v.is_positive() {
                Val::made(BigRational::zero(), self.exact && b.exact, self.e(), pos)
            } else {
                Err(err(
                    Code::Range,
                    pos,
                    "zero to a negative power divides by zero",
                ))
            };
        }
        if self.exact && b.exact {
            if let Some(root) = exact_root(&self.v, b.v.denom()) {
                return Val {
                    v: root,
                    exact: true,
                    err: NONE,
                }
                .whole_power(b.v.numer(), pos);
            }
        }
        // a^b = exp(b ln a), bounded so the result fits.
        let y = b.mul(&self.clone().call(Func::Ln, pos)?, pos)?;
        let limit = BigRational::from_integer(BigInt::from(MAX_BITS as i64 * 7 / 10));
        if y.v.abs() > limit {
            return Err(err(
                Code::Range,
                pos,
                format!("the power here is beyond about 10^±{}", MAX_BITS * 3 / 10),
            ));
        }
        if y.e() >= -2 {
            return Err(lost(pos, "the exponent of this power"));
        }
        // |e^y − e^Y| ≤ e^Y · 2|y − Y| when |y − Y| ≤ 1/4; the series' own error is below
        // 2^-240 relative.
        let v = exp(&y.v);
        let e = (hi(&v) + y.e() + 1).max(hi(&v) - 240) + 1;
        Val::made(v, false, e, pos)
    }

    fn whole_power(&self, n: &BigInt, pos: usize) -> Result<Val, CalcError> {
        if n.is_zero() {
            return Ok(Val {
                v: BigRational::one(),
                exact: self.exact,
                err: if self.exact {
                    NONE
                } else {
                    -(WORK_BITS as i64)
                },
            });
        }
        // ±1 to any whole power is ±1, however large the exponent.
        if self.exact && self.v.abs().is_one() {
            let v = if self.v.is_negative() && n.is_odd() {
                -BigRational::one()
            } else {
                BigRational::one()
            };
            return Val::exact(v, pos);
        }
        if self.v.is_zero() {
            return if n.is_positive() {
                Ok(self.clone())
            } else {
                Err(err(
                    Code::Range,
                    pos,
                    "zero to a negative power divides by zero",
                ))
            };
        }
        let unit = self.v.abs().is_one();
        // A lower bound of the result's bits: past the bound, refused before computing.
        let grows = if self.exact {
            self.v.numer().bits().max(self.v.denom().bits()) - 1
        } else {
            magnitude(&self.v).unsigned_abs()
        };
        let too_big = n
            .abs()
            .to_u64()
            .is_none_or(|e| !unit && grows.saturating_mul(e) > MAX_BITS);
        if too_big {
            return Err(err(
                Code::Range,
                pos,
                format!("this power would pass {MAX_BITS} bits (about 1200 digits): refused rather than computed"),
            ));
        }
        let e = n.abs().to_u64().unwrap_or(0);
        let mut result = BigRational::one();
        let mut base = self.v.clone();
        let mut rest = e;
        while rest > 0 {
            if rest & 1 == 1 {
                result *= &base;
                if !self.exact {
                    result = approximate(result);
                }
            }
            rest >>= 1;
            if rest > 0 {
                base = &base * &base;
                if !self.exact {
                    base = approximate(base);
                }
                // A base past the bound with a factor still to come: so is the result.
                if magnitude(&base).unsigned_abs() > MAX_BITS {
                    return Val {
                        v: base,
                        exact: self.exact,
                        err: NONE,
                    }
                    .checked(pos);
                }
            }
        }
        if n.is_negative() {
            result = result.recip();
        }
        let mut e = NONE;
        if !self.exact {
            // Relative errors multiply by the exponent; each of the ≤ 2·log2(n) roundings adds
            // 2^-WORK_BITS relative, carried by what is left of the exponent.
            let rel = self.relative(pos, "the base of this power")?;
            let bits = e_bits(n) as i64;
            let out = rel.max(-(WORK_BITS as i64) + 1) + bits + 2 + i64::from(n.is_negative());
            if out >= -1 {
                return Err(lost(pos, "this power of an approximation"));
            }
            e = hi(&result) + out + 1;
        }
        Val::made(result, self.exact, e, pos)
    }

    pub fn call(self, f: Func, pos: usize) -> Result<Val, CalcError> {
        let x = &self.v;
        match f {
            Func::Abs => Val::made(x.abs(), self.exact, self.err, pos),
            Func::Floor => self.to_whole(x.floor(), x - x.floor(), false, pos),
            Func::Ceil => self.to_whole(x.ceil(), x.ceil() - x, false, pos),
            Func::Round => self.to_whole(x.round(), x - x.floor(), true, pos),
            Func::Sqrt => {
                if x.is_negative() {
                    return Err(err(
                        Code::Range,
                        pos,
                        "sqrt of a negative number is not a real number",
                    ));
                }
                if self.exact {
                    if let Some(r) = exact_root(x, &BigInt::from(2)) {
                        return Val::exact(r, pos);
                    }
                }
                let r = sqrt(x);
                // |√a − √A| ≤ |a − A| / √A (or √|a − A| at A = 0); the integer root is good to
                // 2·WORK_BITS bits.
                let carried = if self.exact {
                    NONE
                } else if x.is_zero() {
                    self.err / 2 + 1
                } else {
                    self.err - lo(x).div_euclid(2)
                };
                let e = carried.max(hi(&r) - 2 * WORK_BITS as i64) + 1;
                Val::made(r, false, e, pos)
            }
            Func::Ln | Func::Log => {
                if !x.is_positive() {
                    return Err(err(
                        Code::Range,
                        pos,
                        format!("{} is defined for numbers above zero only", f.name()),
                    ));
                }
                if f == Func::Ln {
                    if self.exact && x.is_one() {
                        return Val::exact(BigRational::zero(), pos);
                    }
                    return self.ln_val(pos);
                }
                if self.exact {
                    if let Some(n) = power_of_ten(x) {
                        return Val::exact(BigRational::from_integer(n), pos);
                    }
                }
                let ten = Val {
                    v: BigRational::from_integer(BigInt::from(10)),
                    exact: true,
                    err: NONE,
                };
                self.ln_val(pos)?.div(&ten.ln_val(pos)?, pos)
            }
        }
    }

    /// ln of a positive value: |ln a − ln A| ≤ |a − A| / min(a, A), and the series' own error.
    fn ln_val(&self, pos: usize) -> Result<Val, CalcError> {
        let carried = if self.exact {
            NONE
        } else {
            self.relative(pos, "the argument of ln or log")? + 1
        };
        let (v, own) = ln(&self.v);
        Val::made(v, false, carried.max(own) + 1, pos)
    }

    /// floor / ceil / round. An approximation gives an exact whole number when it is farther
    /// from the deciding boundary (a whole number, or a half for round) than its error.
    fn to_whole(
        &self,
        w: BigRational,
        frac: BigRational,
        half: bool,
        pos: usize,
    ) -> Result<Val, CalcError> {
        let exact = self.exact || {
            let d = if half {
                (frac - BigRational::new(BigInt::one(), BigInt::from(2))).abs()
            } else {
                let f = frac.abs();
                let g = BigRational::one() - &f;
                f.min(g)
            };
            d > p2(self.err + 1)
        };
        // Not certain: the true whole number may be the next one either way.
        Val::made(w, exact, self.e().max(0) + 1, pos)
    }

    /// The answer: an approximation gives the digits its error bound vouches for, at most
    /// `SIGNIFICANT_DIGITS`; one with none certain is refused (`E_PRECISION`).
    pub fn answer(&self, pos: usize) -> Result<Answer, CalcError> {
        if self.exact {
            if let Some(d) = terminating(&self.v) {
                return Ok(Answer {
                    result: d,
                    exact: true,
                    fraction: None,
                    significant_digits: None,
                });
            }
            return Ok(Answer {
                result: significant(&self.v, SIGNIFICANT_DIGITS),
                exact: false,
                fraction: Some(format!("{}/{}", self.v.numer(), self.v.denom())),
                significant_digits: Some(SIGNIFICANT_DIGITS),
            });
        }
        // Digits d are certain when the error is under half a unit of the d-th digit:
        // 2^err ≤ 10^(e - d + 1) / 2 with 10^e ≤ |v|; from log2 |v| > lo.
        let good = if self.v.is_zero() {
            0
        } else {
            (((lo(&self.v) - self.err - 2) as f64) * std::f64::consts::LOG10_2).floor() as i64
        };
        let digits = good.clamp(0, SIGNIFICANT_DIGITS as i64) as usize;
        if digits == 0 {
            return Err(lost(pos, "the result"));
        }
        Ok(Answer {
            result: significant(&self.v, digits),
            exact: false,
            fraction: None,
            significant_digits: Some(digits),
        })
    }
}

/// The `n`th root of a positive rational when it is rational (both parts perfect powers).
fn exact_root(x: &BigRational, n: &BigInt) -> Option<BigRational> {
    let n = n.to_u32().filter(|n| *n >= 2 && *n <= 4096)?;
    let root = |i: &BigInt| -> Option<BigInt> {
        let r = i.nth_root(n);
        (num_traits::pow(r.clone(), n as usize) == *i).then_some(r)
    };
    Some(BigRational::new(root(x.numer())?, root(x.denom())?))
}

/// `n` when x is exactly 10^n.
fn power_of_ten(x: &BigRational) -> Option<BigInt> {
    let strip = |i: &BigInt| -> Option<i64> {
        let mut i = i.clone();
        let mut n = 0;
        let ten = BigInt::from(10);
        while !i.is_one() {
            let (q, r) = i.div_rem(&ten);
            if !r.is_zero() {
                return None;
            }
            i = q;
            n += 1;
        }
        Some(n)
    };
    Some(BigInt::from(strip(x.numer())? - strip(x.denom())?))
}

/// sqrt of a positive rational to at least `WORK_BITS` bits: isqrt(p q 4^k) / (q 2^k).
fn sqrt(x: &BigRational) -> BigRational {
    let pq = x.numer() * x.denom();
    let k = (2 * WORK_BITS + 8).saturating_sub(pq.bits() / 2) + 1;
    let n = pq << (2 * k);
    BigRational::new(n.sqrt(), x.denom() << k)
}

/// Σ t^(2i+1)/(2i+1), scaled by 2^f: atanh(t) for |t| ≤ 1/3.
fn atanh_fixed(t: &BigRational, f: u64) -> BigInt {
    let (p, q) = (t.numer(), t.denom());
    let (p2, q2) = (p * p, q * q);
    let mut term = (p << f) / q;
    let mut sum = BigInt::zero();
    let mut i: u64 = 0;
    loop {
        let s = &term / BigInt::from(2 * i + 1);
        if s.is_zero() {
            break;
        }
        sum += s;
        term = term * &p2 / &q2;
        i += 1;
    }
    sum
}

/// ln 2 scaled by 2^f.
fn ln2_fixed(f: u64) -> BigInt {
    atanh_fixed(&BigRational::new(BigInt::one(), BigInt::from(3)), f) * 2
}

/// ln of a positive rational: x = y 2^k with y in (1/2, 2), ln y = 2 atanh((y-1)/(y+1)).
/// Answers log2 of its own error bound too: the series and k ln 2 at f + 16 bits lose fewer
/// than 2^10 units of the last place.
fn ln(x: &BigRational) -> (BigRational, i64) {
    let k = magnitude(x);
    let y = if k >= 0 {
        x / BigRational::from_integer(pow2(k as u64))
    } else {
        x * BigRational::from_integer(pow2((-k) as u64))
    };
    let t = (&y - BigRational::one()) / (&y + BigRational::one());
    // Near 1, ln is near 0: more bits keep its relative precision.
    let f = SERIES_BITS
        + if t.is_zero() {
            0
        } else {
            (-magnitude(&t)).max(0) as u64
        };
    let sum = atanh_fixed(&t, f + 16) * 2 + ln2_fixed(f + 16) * BigInt::from(k);
    (BigRational::new(sum, pow2(f + 16)), -(f as i64) + 10)
}

/// The bits of |n| (log2 upper bound).
fn e_bits(n: &BigInt) -> u64 {
    n.bits()
}

/// exp of a rational of modest size: y = k ln 2 + r, exp(r) by its series, times 2^k.
fn exp(y: &BigRational) -> BigRational {
    let f = SERIES_BITS + 16;
    let l = ln2_fixed(f);
    let yf = (y.numer() << f) / y.denom();
    let k = (&yf / &l).to_i64().unwrap_or(0);
    let r = yf - &l * BigInt::from(k);
    let one = pow2(f);
    let mut term = one.clone();
    let mut sum = one.clone();
    let mut i: u64 = 1;
    loop {
        term = ((term * &r) >> f) / BigInt::from(i);
        if term.is_zero() {
            break;
        }
        sum += &term;
        i += 1;
    }
    let e = BigRational::new(sum, one);
    if k >= 0 {
        e * BigRational::from_integer(pow2(k as u64))
    } else {
        e / BigRational::from_integer(pow2((-k) as u64))
    }
}

/// The exact decimal of a rational whose denominator has no prime but 2 and 5.
fn terminating(v: &BigRational) -> Option<String> {
    let mut d = v.denom().clone();
    let (two, five) = (BigInt::from(2), BigInt::from(5));
    let (mut twos, mut fives) = (0usize, 0usize);
    while d.is_even() {
        d /= &two;
        twos += 1;
    }
    while (&d % &five).is_zero() {
        d /= &five;
        fives += 1;
    }
    if !d.is_one() {
        return None;
    }
    let places = twos.max(fives);
    let scaled = v.numer() * num_traits::pow(BigInt::from(10), places) / v.denom();
    Some(place_point(&scaled, places))
}

/// `digits / 10^places` written out.
fn place_point(scaled: &BigInt, places: usize) -> String {
    let sign = if scaled.is_negative() { "-" } else { "" };
    let digits = scaled.abs().to_string();
    if places == 0 {
        return format!("{sign}{digits}");
    }
    let digits = format!("{digits:0>width$}", width = places + 1);
    let (whole, frac) = digits.split_at(digits.len() - places);
    format!("{sign}{whole}.{frac}")
}

/// |v| rounded half away from zero to `n` digits: the digits and the power of ten of the first.
fn rounded_digits(v: &BigRational, n: usize) -> (BigInt, i64) {
    let a = v.abs();
    let ten = BigRational::from_integer(BigInt::from(10));
    // e with 10^e ≤ a < 10^(e+1), from log10(2) and a correction.
    let mut e = (magnitude(&a) as f64 * std::f64::consts::LOG10_2).floor() as i64;
    let pow = |e: i64| -> BigRational {
        if e >= 0 {
            num_traits::pow(ten.clone(), e as usize)
        } else {
            num_traits::pow(ten.clone(), (-e) as usize).recip()
        }
    };
    while pow(e) > a {
        e -= 1;
    }
    while pow(e + 1) <= a {
        e += 1;
    }
    let shift = n as i64 - 1 - e;
    let m = (a * pow(shift)).round().to_integer();
    if m >= num_traits::pow(BigInt::from(10), n) {
        (m / BigInt::from(10), e + 1)
    } else {
        (m, e)
    }
}

/// A value to `n` significant digits, trailing zeros dropped; plain from 1e-20 to 1e30,
/// scientific (`1.5e+40`) outside.
fn significant(v: &BigRational, n: usize) -> String {
    if v.is_zero() {
        return "0".into();
    }
    let sign = if v.is_negative() { "-" } else { "" };
    let (m, e) = rounded_digits(v, n);
    let digits = m.to_string();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    if (-20..30).contains(&e) {
        let len = digits.len() as i64;
        let plain = if e < 0 {
            format!("0.{}{digits}", "0".repeat((-e - 1) as usize))
        } else if len <= e + 1 {
            format!("{digits}{}", "0".repeat((e + 1 - len) as usize))
        } else {
            let (whole, frac) = digits.split_at((e + 1) as usize);
            format!("{whole}.{frac}")
        };
        return format!("{sign}{plain}");
    }
    let (first, rest) = digits.split_at(1);
    let mantissa = if rest.is_empty() {
        first.to_string()
    } else {
        format!("{first}.{rest}")
    };
    let e = if e >= 0 {
        format!("+{e}")
    } else {
        format!("{e}")
    };
    format!("{sign}{mantissa}e{e}")
}

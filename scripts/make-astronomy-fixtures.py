#!/usr/bin/env python3
"""Writes the Sun, Moon and crescent-visibility fixtures that the Swift astronomy code is checked against.

    python3 -m venv .venv-astro
    .venv-astro/bin/pip install -r scripts/astronomy-oracle-requirements.txt
    .venv-astro/bin/python scripts/make-astronomy-fixtures.py OUTDIR

It needs no network once the packages are installed, and takes about a minute. The output is deterministic: the
instants and evenings come from a fixed random seed, and the gzip headers carry no file name and mtime 0, so a rerun
with the same package versions writes byte-identical files.

THE ORACLE
  Positions come from the JPL DE421 ephemeris (1900-2050) as shipped by the `de421` package (the Chebyshev
  coefficients of JPL's own ASCII release, stored as numpy arrays), read with jplephem's legacy `Ephemeris` class.
  Everything else -- light-time, gravitational deflection, aberration, IAU 2006 precession, IAU 2000A nutation,
  Earth rotation (ERA/GAST), WGS84 sites, TT/TDB/UT1 -- is Skyfield's own machinery. We do this by wrapping the
  arrays in Skyfield `VectorFunction` segments with the same chain as the de421.bsp file that Skyfield normally uses
  (SSB->Sun, SSB->Earth-Moon barycentre, EMB->Earth, EMB->Moon, and SSB->Jupiter/Saturn barycentres for the
  deflection), so `earth.at(t).observe(moon).apparent()` runs Skyfield's code unchanged. DE421's ASCII file stores the
  Moon geocentric, so EMB->Earth = -Moon/(1+EMRAT) and EMB->Moon = +Moon*EMRAT/(1+EMRAT): exactly the segments JPL put
  in de421.bsp (same polynomials, same granules), so the numbers equal Skyfield + de421.bsp up to float rounding. We
  did not use de421.bsp itself only because it would have to be downloaded outside a package registry.

  Time: UT means UT1. TT - UT1 (`delta_t`, seconds) is Skyfield's built-in timescale (`load.timescale(builtin=True)`:
  IERS values where measured, then Skyfield's long-term spline / extrapolation), recorded in every line so the Swift
  side can use the same value and test its positions independently of its own Delta-T model. TDB is Skyfield's.

  PyEphem (XEphem's libastro: truncated VSOP87 for the Sun and a truncated lunar theory for the Moon, not JPL) is a
  second, weaker oracle, used only for 2050-2100, which DE421 does not cover. See pyephem-sun-moon.jsonl.gz below.

FIXTURES (gzipped JSON Lines, one object a line; angles in degrees unless the key says otherwise)

  sun-moon.jsonl.gz -- 1,500 instants, uniform in UT1 over 1900-01-01 .. 2049-12-31, sorted.
    jd_ut, delta_t (TT - UT1, s), jd_tt;
    sun / moon: {lon, lat, ra, dec, dist_km}: the APPARENT GEOCENTRIC place of date: light-time corrected, deflected
      (Sun, Jupiter, Saturn; negligible here), annual aberration for an observer at the geocentre, then precession
      (IAU 2006) and nutation (IAU 2000A) to the TRUE equator and equinox of date (ra, dec) and to the TRUE ecliptic
      and equinox of date (lon, lat; the longitude includes nutation in longitude). lon and ra are in [0, 360).
      dist_km is the GEOMETRIC distance between the centres at the instant (as Meeus's and PyEphem's theories give
      it), not the light-time distance, which for the Moon is up to ~40 km longer because the Earth-Moon system moves
      during the ~1.3 s light-time.
    dpsi_arcsec, deps_arcsec (IAU 2000A nutation), eps_true (true obliquity), gast (Greenwich apparent sidereal time,
      degrees): what Skyfield used, to help locate a disagreement.

  horizon.jsonl.gz -- 6 sites x 203 evenings: 200 drawn at random from the conjunctions in
    conjunctions.jsonl.gz, each the UT calendar date of the conjunction plus 0, 1 or 2 days, and 3 fixed ones
    (2026-02-17/18/19, the conjunction of 2026-02-17 and the two days after). Sites are WGS84 geodetic
    (lat, lon east positive, height above the ellipsoid in metres).
    date: the civil date of the evening; sunset is the Sun setting between local-mean-time midnights of that date
      (UT window starting at date 00:00 - lon/15 h, one day long).
    sunset: the Sun's CENTRE at topocentric airless apparent altitude -50' (34' refraction + 16' semidiameter).
    moonset: the Moon's setting nearest to that sunset (before or after it), when its CENTRE is at topocentric airless
      apparent altitude -34' - SD, SD = asin(1737.4 km / topocentric geometric distance) (Skyfield's lunar radius): i.e. the
      upper limb on the refracted horizon, with parallax. Each found with Skyfield's find_settings, then refined by
      secant steps on the altitude to < 1 ms.
    *_ut is ISO 8601 UT1 rounded to the second with a Z (UTC is within 0.9 s of it since 1972); *_jd_ut is exact.
    lag_min = moonset - sunset (negative when the Moon sets first); age_h = sunset - conjunction, hours.
    best time (Odeh): sunset + 4/9 (moonset - sunset), even when the lag is negative. At the best time, all
      TOPOCENTRIC, AIRLESS (no refraction) apparent places (light-time, aberration incl. diurnal, precession, nutation;
      altitude above the WGS84 ellipsoid normal, azimuth from north through east):
      sun_alt, sun_az, moon_alt, moon_az; moon_dist_km (topocentric, geometric as in sun-moon); sd_arcmin = asin(1737.4 km / moon_dist_km);
      arcl = topocentric Sun-Moon elongation (angle between the two apparent directions);
      arcv = moon_alt - sun_alt; daz = sun_az - moon_az, wrapped to (-180, 180];
      w_arcmin = sd_arcmin * (1 - cos arcl);
      v = arcv - (-0.1018 W^3 + 0.7319 W^2 - 6.3226 W + 7.1651), W in arcmin;
      zone: Odeh 2006, "A" V >= 5.65, "B" V >= 2.00, "C" V >= -0.96, else "D".

  conjunctions.jsonl.gz -- every geocentric new moon from 1900-01-01 to 2049-12-31: the instant when the apparent
    ecliptic longitudes of date (as in sun-moon) of Moon and Sun are equal, found with Skyfield's find_discrete (as
    its almanac.moon_phases does, but with full IAU 2000A nutation) to 1 ms. jd_ut, ut (ISO, as above), delta_t,
    and residual_arcsec (Moon - Sun longitude at the time written; the Moon gains ~0.5" a second).

  pyephem-sun-moon.jsonl.gz -- SECOND, WEAKER ORACLE. 300 instants uniform in UT1 over 2050-01-01 .. 2100-12-31,
    sorted, same keys as sun-moon (without the nutation extras). The instant is jd_ut with Skyfield's delta_t (so
    jd_tt = jd_ut + delta_t/86400); PyEphem is given the date whose TT, by PyEphem's own Delta-T, is that jd_tt, so
    only the theories differ. ra, dec: PyEphem's apparent geocentric place of date (g_ra, g_dec); lon, lat: those
    rotated to the ecliptic of date with the TRUE obliquity from Skyfield (IAU 2006 + IAU 2000A); dist_km: PyEphem's
    earth_distance * its AU. The script prints how far PyEphem is from DE421 over 1900-2049 at the sun-moon instants;
    use those numbers as the tolerance when testing against this file. With ephem 4.2.1 they were, max |difference|:
    Sun lon 0.67", lat 0.12", dist 94 km; Moon lon 0.30", lat 0.20", dist 0.25 km.
"""
import datetime
import gzip
import json
import math
import os
import random
import sys
import time

import de421
import ephem
import numpy as np
from jplephem.ephem import Ephemeris
from skyfield.api import load, wgs84
from skyfield.almanac import find_settings
from skyfield.constants import AU_KM
from skyfield.framelib import ecliptic_frame
from skyfield.nutationlib import mean_obliquity
from skyfield.searchlib import find_discrete
from skyfield.vectorlib import VectorFunction, VectorSum

SEED = 20060101  # Odeh 2006
SUN_MOON_COUNT = 1500
EVENING_COUNT = 200
PYEPHEM_COUNT = 300
MOON_RADIUS_KM = 1737.4  # Skyfield's (almanac._moon_radius_m), IAU mean radius
SUN_HORIZON_DEG = -50.0 / 60.0
REFRACTION_DEG = 34.0 / 60.0
SITES = [
    ("Tehran", 35.6892, 51.3890, 1190.0),
    ("Qom", 34.6401, 50.8764, 928.0),
    ("Mashhad", 36.2605, 59.6168, 995.0),
    ("Najaf", 32.0259, 44.3462, 60.0),
    ("London", 51.5074, -0.1278, 11.0),
    ("Dearborn", 42.3223, -83.1763, 180.0),
]
FIXED_EVENINGS = ["2026-02-17", "2026-02-18", "2026-02-19"]

JD_UNIX_EPOCH = 2440587.5
JD_1900 = 2415020.5  # 1900-01-01 00:00
JD_2050 = 2469807.5  # 2050-01-01 00:00
JD_2101 = 2488434.5  # 2101-01-01 00:00
PYEPHEM_EPOCH_JD = 2415020.0  # ephem.Date(0) is 1899-12-31 12:00

ts = load.timescale(builtin=True)  # never downloads


# --- DE421 as a Skyfield ephemeris -----------------------------------------------------------------------------------

class _Segment(VectorFunction):
    """One DE421 vector, center -> target, evaluated from the de421 package's Chebyshev arrays."""

    def __init__(self, ephemeris, center, target, name, scale=1.0):
        self.ephemeris = ephemeris
        self.center = center
        self.target = target
        self.name = name
        self.scale = scale

    def _at(self, t):
        whole, fraction = np.broadcast_arrays(np.asarray(t.whole, float), np.asarray(t.tdb_fraction, float))
        shape = whole.shape
        # km and km/day, ICRF (DE421's frame), at TDB = whole + fraction, as Skyfield's SPK segments evaluate.
        p, v = self.ephemeris.jpl.position_and_velocity(self.name, whole.ravel(), fraction.ravel())
        p = p.reshape((3,) + shape) * (self.scale / AU_KM)
        v = v.reshape((3,) + shape) * (self.scale / AU_KM)
        return p, v, None, None


class DE421:
    """Looks up bodies like a Skyfield SpiceKernel: by NAIF code or by name."""

    def __init__(self):
        self.jpl = Ephemeris(de421)
        earth_share = 1.0 / (1.0 + self.jpl.EMRAT)
        moon_share = self.jpl.EMRAT / (1.0 + self.jpl.EMRAT)
        emb = _Segment(self, 0, 3, "earthmoon")
        self.bodies = {
            3: emb,
            5: _Segment(self, 0, 5, "jupiter"),
            6: _Segment(self, 0, 6, "saturn"),
            10: _Segment(self, 0, 10, "sun"),
            # The ASCII ephemeris's "moon" is geocentric; split it about the Earth-Moon barycentre.
            399: VectorSum(0, 399, (emb, _Segment(self, 3, 399, "moon", -earth_share))),
            301: VectorSum(0, 301, (emb, _Segment(self, 3, 301, "moon", moon_share))),
        }
        self.names = {"sun": 10, "earth": 399, "moon": 301, "jupiter barycenter": 5, "saturn barycenter": 6}

    def _code(self, key):
        return self.names.get(key, key) if isinstance(key, str) else key

    def __contains__(self, key):
        return self._code(key) in self.bodies

    def __getitem__(self, key):
        return self.bodies[self._code(key)]


EPH = DE421()
SUN, EARTH, MOON = EPH["sun"], EPH["earth"], EPH["moon"]


# --- helpers ---------------------------------------------------------------------------------------------------------

def iso_ut(jd_ut):
    seconds = round((jd_ut - JD_UNIX_EPOCH) * 86400.0)
    return (datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def jd_of_date(text):
    day = datetime.date.fromisoformat(text)
    return JD_UNIX_EPOCH + (day - datetime.date(1970, 1, 1)).days


def wrap180(deg):
    return (deg + 180.0) % 360.0 - 180.0


def r(x, digits):
    return round(float(x), digits)


def write_jsonl_gz(path, rows):
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as out:
        for row in rows:
            out.write((json.dumps(row, separators=(",", ":")) + "\n").encode())
    print("wrote %s: %d lines, %d bytes" % (path, len(rows), os.path.getsize(path)), file=sys.stderr)


def geocentric_apparent(t, body):
    """Apparent geocentric place of date: (lon, lat, ra, dec, dist_km) arrays, degrees."""
    earth = EARTH.at(t)
    app = earth.observe(body).apparent()
    lat, lon, _ = app.frame_latlon(ecliptic_frame)
    ra, dec, _ = app.radec("date")
    return lon.degrees % 360.0, lat.degrees, ra.hours * 15.0 % 360.0, dec.degrees, geometric_km(earth, body)


def geometric_km(observer_position, body):
    """Instantaneous (not light-time) distance from the observer to the body's centre, km."""
    vector = body.at(observer_position.t).xyz.au - observer_position.xyz.au
    return np.sqrt(np.sum(vector * vector, axis=0)) * AU_KM


def place(lon, lat, ra, dec, dist):
    return {"lon": r(lon, 9), "lat": r(lat, 9), "ra": r(ra, 9), "dec": r(dec, 9), "dist_km": r(dist, 4)}


# --- (a) sun-moon ----------------------------------------------------------------------------------------------------

def sun_moon_rows(jd_ut):
    t = ts.ut1_jd(np.array(jd_ut))
    sun = geocentric_apparent(t, SUN)
    moon = geocentric_apparent(t, MOON)
    dpsi, deps = t._nutation_angles_radians
    eps_true = mean_obliquity(t.tdb) / 3600.0 + np.degrees(deps)
    rows = []
    for i, jd in enumerate(jd_ut):
        rows.append({
            "jd_ut": r(jd, 9), "delta_t": r(t.delta_t[i], 6), "jd_tt": r(t.tt[i], 9),
            "sun": place(*(x[i] for x in sun)), "moon": place(*(x[i] for x in moon)),
            "dpsi_arcsec": r(np.degrees(dpsi[i]) * 3600.0, 6), "deps_arcsec": r(np.degrees(deps[i]) * 3600.0, 6),
            "eps_true": r(eps_true[i], 9), "gast": r(t.gast[i] * 15.0, 9),
        })
    return rows


# --- (c) conjunctions ------------------------------------------------------------------------------------------------

def elongation_in_longitude(t):
    """Apparent ecliptic longitude of the Moon minus the Sun's, degrees in [0, 360)."""
    e = EARTH.at(t)
    _, mlon, _ = e.observe(MOON).apparent().frame_latlon(ecliptic_frame)
    _, slon, _ = e.observe(SUN).apparent().frame_latlon(ecliptic_frame)
    return (mlon.degrees - slon.degrees) % 360.0


def conjunction_rows():
    def waxing_half(t):  # 0 from new moon to full moon, 1 from full to new: steps to 0 at each new moon
        return (elongation_in_longitude(t) >= 180.0).astype(int)
    waxing_half.step_days = 7.0
    times, values = find_discrete(ts.ut1_jd(JD_1900), ts.ut1_jd(JD_2050), waxing_half)
    t = times[values == 0]
    residual = wrap180(elongation_in_longitude(t)) * 3600.0
    rows = [{"jd_ut": r(jd, 9), "ut": iso_ut(jd), "delta_t": r(dt, 6), "residual_arcsec": r(res, 4)}
            for jd, dt, res in zip(t.ut1, t.delta_t, residual)]
    return rows


# --- (b) horizon -----------------------------------------------------------------------------------------------------

def topocentric(observer, t, body):
    """Airless apparent topocentric (alt, az, distance km, apparent position)."""
    position = observer.at(t)
    app = position.observe(body).apparent()
    alt, az, _ = app.altaz()  # no temperature/pressure: no refraction
    return alt.degrees, az.degrees, geometric_km(position, body), app


def altitude_above_horizon(observer, t, body):
    alt, _, dist, _ = topocentric(observer, t, body)
    if body is SUN:
        return alt - SUN_HORIZON_DEG
    return alt + REFRACTION_DEG + np.degrees(np.arcsin(MOON_RADIUS_KM / dist))


def refine_settings(observer, body, jd_tt):
    """Secant steps on the altitude above the body's horizon, from Skyfield's estimate; returns TT Julian dates."""
    x0 = np.array(jd_tt) - 2.0 / 86400.0
    x1 = np.array(jd_tt) + 2.0 / 86400.0
    f0 = altitude_above_horizon(observer, ts.tt_jd(x0), body)
    f1 = altitude_above_horizon(observer, ts.tt_jd(x1), body)
    for _ in range(6):
        step = np.where(f1 != f0, f1 * (x1 - x0) / np.where(f1 != f0, f1 - f0, 1.0), 0.0)
        x0, f0 = x1, f1
        x1 = x1 - step
        if np.max(np.abs(step)) < 1e-4 / 86400.0:
            break
        f1 = altitude_above_horizon(observer, ts.tt_jd(x1), body)
    assert np.max(np.abs(x1 - jd_tt)) < 60.0 / 86400.0, "refinement moved a setting by over a minute"
    assert np.max(np.abs(altitude_above_horizon(observer, ts.tt_jd(x1), body))) < 1e-5
    return x1


def odeh_zone(v):
    return "A" if v >= 5.65 else "B" if v >= 2.0 else "C" if v >= -0.96 else "D"


def horizon_rows(rng, conjunctions):
    conj_jd = np.array([c["jd_ut"] for c in conjunctions])
    evenings = []
    for c in rng.sample(conjunctions, EVENING_COUNT):
        day0 = math.floor(c["jd_ut"] - 0.5) + 0.5  # 00:00 UT of the conjunction's date
        day = day0 + rng.choice([0, 1, 2])
        if day + 2.0 < JD_2050:  # keep the search windows inside 1900-2049
            evenings.append(day)
    evenings += [jd_of_date(d) for d in FIXED_EVENINGS]
    evenings = sorted(set(evenings))

    rows = []
    for name, lat, lon, height in SITES:
        site = wgs84.latlon(lat, lon, elevation_m=height)
        observer = EARTH + site
        sunsets, moonsets = [], []
        for day in evenings:
            start = day - lon / 360.0  # local mean midnight, UT1
            t, _ = find_settings(observer, SUN, ts.ut1_jd(start), ts.ut1_jd(start + 1.0), SUN_HORIZON_DEG)
            assert len(t) == 1, (name, day, t)
            sunsets.append(t.tt[0])
            # default horizon for the Moon: -34' minus its topocentric radius
            t, _ = find_settings(observer, MOON, ts.tt_jd(t.tt[0] - 0.55), ts.tt_jd(t.tt[0] + 0.55))
            moonsets.append(t.tt[np.argmin(np.abs(t.tt - sunsets[-1]))])
        sunset = ts.tt_jd(refine_settings(observer, SUN, sunsets))
        moonset = ts.tt_jd(refine_settings(observer, MOON, moonsets))
        best = ts.tt_jd(sunset.tt + 4.0 / 9.0 * (moonset.tt - sunset.tt))

        sun_alt, sun_az, _, sun_app = topocentric(observer, best, SUN)
        moon_alt, moon_az, moon_dist, moon_app = topocentric(observer, best, MOON)
        arcl = sun_app.separation_from(moon_app).degrees
        sd = np.degrees(np.arcsin(MOON_RADIUS_KM / moon_dist)) * 60.0
        arcv = moon_alt - sun_alt
        daz = wrap180(sun_az - moon_az)
        w = sd * (1.0 - np.cos(np.radians(arcl)))
        v = arcv - (-0.1018 * w ** 3 + 0.7319 * w ** 2 - 6.3226 * w + 7.1651)

        for i, day in enumerate(evenings):
            set_jd, moon_jd, best_jd = sunset.ut1[i], moonset.ut1[i], best.ut1[i]
            conj = conj_jd[np.argmin(np.abs(conj_jd - set_jd))]
            rows.append({
                "site": name, "lat": lat, "lon": lon, "height_m": height,
                "date": iso_ut(day)[:10],
                "sunset_ut": iso_ut(set_jd), "sunset_jd_ut": r(set_jd, 9),
                "moonset_ut": iso_ut(moon_jd), "moonset_jd_ut": r(moon_jd, 9),
                "lag_min": r((moon_jd - set_jd) * 1440.0, 4), "age_h": r((set_jd - conj) * 24.0, 4),
                "best_ut": iso_ut(best_jd), "best_jd_ut": r(best_jd, 9), "delta_t": r(best.delta_t[i], 6),
                "sun_alt": r(sun_alt[i], 7), "sun_az": r(sun_az[i], 7),
                "moon_alt": r(moon_alt[i], 7), "moon_az": r(moon_az[i], 7),
                "moon_dist_km": r(moon_dist[i], 3), "sd_arcmin": r(sd[i], 7),
                "arcl": r(arcl[i], 7), "arcv": r(arcv[i], 7), "daz": r(daz[i], 7),
                "w_arcmin": r(w[i], 7), "v": r(v[i], 6), "zone": odeh_zone(v[i]),
            })
    return rows


# --- (d) PyEphem -----------------------------------------------------------------------------------------------------

def pyephem_places(jd_tt, eps_true_deg):
    """PyEphem's apparent geocentric places of date at TT jd_tt: {'sun': (lon, lat, ra, dec, km), 'moon': ...}."""
    date = jd_tt - PYEPHEM_EPOCH_JD
    for _ in range(3):  # PyEphem takes UT and adds its own Delta-T: find the UT that gives our TT
        date = jd_tt - PYEPHEM_EPOCH_JD - ephem.delta_t(ephem.Date(date)) / 86400.0
    eps = math.radians(eps_true_deg)
    out = {}
    for key, body in (("sun", ephem.Sun()), ("moon", ephem.Moon())):
        body.compute(ephem.Date(date))
        ra, dec = float(body.g_ra), float(body.g_dec)
        x, y, z = math.cos(dec) * math.cos(ra), math.cos(dec) * math.sin(ra), math.sin(dec)
        y, z = y * math.cos(eps) + z * math.sin(eps), -y * math.sin(eps) + z * math.cos(eps)
        out[key] = (math.degrees(math.atan2(y, x)) % 360.0, math.degrees(math.asin(z)),
                    math.degrees(ra) % 360.0, math.degrees(dec), body.earth_distance * ephem.meters_per_au / 1000.0)
    return out


def true_obliquity(t):
    return mean_obliquity(t.tdb) / 3600.0 + np.degrees(t._nutation_angles_radians[1])


def pyephem_rows(jd_ut):
    t = ts.ut1_jd(np.array(jd_ut))
    eps = true_obliquity(t)
    rows = []
    for i, jd in enumerate(jd_ut):
        p = pyephem_places(t.tt[i], eps[i])
        rows.append({"jd_ut": r(jd, 9), "delta_t": r(t.delta_t[i], 6), "jd_tt": r(t.tt[i], 9),
                     "sun": place(*p["sun"]), "moon": place(*p["moon"])})
    return rows


def compare_pyephem(sun_moon):
    """Prints how far PyEphem is from DE421 at the sun-moon instants (1900-2049)."""
    diffs = {(b, k): [] for b in ("sun", "moon") for k in ("lon", "lat", "ra", "dec", "dist_km")}
    for row in sun_moon:
        p = pyephem_places(row["jd_tt"], row["eps_true"])
        for b in ("sun", "moon"):
            for j, k in enumerate(("lon", "lat", "ra", "dec", "dist_km")):
                d = p[b][j] - row[b][k]
                if k in ("lon", "ra"):
                    d = wrap180(d) * (math.cos(math.radians(row[b]["dec"])) if k == "ra" else 1.0)
                diffs[(b, k)].append(d * (1.0 if k == "dist_km" else 3600.0))
    print("PyEphem - DE421 at %d instants 1900-2049 (arcsec; ra as ra*cos(dec); km for dist):" % len(sun_moon),
          file=sys.stderr)
    for (b, k), d in diffs.items():
        d = np.array(d)
        print("  %-4s %-7s max|d| %10.3f  rms %9.3f  mean %9.3f" % (b, k, np.max(np.abs(d)), np.sqrt(np.mean(d * d)),
                                                                   np.mean(d)), file=sys.stderr)


# --- main ------------------------------------------------------------------------------------------------------------

def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make-astronomy-fixtures.py OUTDIR")
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    rng = random.Random(SEED)
    started = time.time()

    sun_moon = sun_moon_rows(sorted(rng.uniform(JD_1900, JD_2050) for _ in range(SUN_MOON_COUNT)))
    write_jsonl_gz(os.path.join(outdir, "sun-moon.jsonl.gz"), sun_moon)

    conjunctions = conjunction_rows()
    write_jsonl_gz(os.path.join(outdir, "conjunctions.jsonl.gz"), conjunctions)

    write_jsonl_gz(os.path.join(outdir, "horizon.jsonl.gz"), horizon_rows(rng, conjunctions))

    pyephem = pyephem_rows(sorted(rng.uniform(JD_2050, JD_2101) for _ in range(PYEPHEM_COUNT)))
    write_jsonl_gz(os.path.join(outdir, "pyephem-sun-moon.jsonl.gz"), pyephem)
    compare_pyephem(sun_moon)
    print("done in %.0f s" % (time.time() - started), file=sys.stderr)


if __name__ == "__main__":
    main()

package ara

import (
	"math"
	"math/big"
	"testing"
)

// referenceGain is flexible_event_privacy.py's max_information_gain as it
// is written there, in float64: log2 k − h(q) − q·log2(k−1),
// q = p·(k−1)/k, p = k/(k + e^ε − 1).
func referenceGain(k, eps float64) float64 {
	p := k / (k + math.Exp(eps) - 1)
	q := p * (k - 1) / k
	h := 0.0
	if q != 0 && q != 1 {
		h = -q*math.Log2(q) - (1-q)*math.Log2(1-q)
	}
	return math.Log2(k) - h - q*math.Log2(k-1)
}

// highPrecision is p and the information gain by flexible_event_privacy.py's
// formulas evaluated in 80-digit arithmetic (mpmath 1.3, at the float64
// value of ε), rounded to 17 digits.
var highPrecision = []struct {
	k         string
	eps, p, g float64
}{
	{"2", 1e-6, 9.999995e-1, 1.8033688011109787e-13},
	{"2", 1e-3, 9.9950000004166666e-1, 1.8033685756901292e-7},
	{"2", 0.5, 7.5508133759629087e-1, 4.3713460619271024e-2},
	{"2", 1, 5.3788284273999024e-1, 1.6005846201683078e-1},
	{"2", 4, 3.5972419924183116e-2, 8.7002072533369509e-1},
	{"2", 8, 6.7070026093295621e-4, 9.9564564712765708e-1},
	{"2", 14, 1.6630560553282643e-6, 9.9998200537907316e-1},
	{"2", 20, 4.1223072363804072e-9, 9.9999993755406182e-1},
	{"2", 64, 3.2076217810972757e-28, 1.0},
	{"2", 1000, 1.0151917795098914e-434, 1.0},
	{"3", 1e-6, 9.9999966666661111e-1, 1.60299484609749e-13},
	{"3", 1e-3, 9.9966661112963734e-1, 1.6033505772321379e-7},
	{"3", 0.5, 8.2220585718359093e-1, 4.3521637302051487e-2},
	{"3", 1, 6.3582467285125634e-1, 1.7786187834204965e-1},
	{"3", 4, 5.3005266042144148e-2, 1.3291385129248989},
	{"3", 8, 1.0057131253716291e-3, 1.5762565522723495},
	{"3", 14, 2.4945820086775389e-6, 1.584926511508231},
	{"3", 20, 6.1834608418255481e-9, 1.5849623758292801},
	{"3", 64, 4.8114326716459136e-28, 1.5849625007211562},
	{"3", 1000, 1.522787669264837e-434, 1.5849625007211562},
	{"165", 1e-6, 9.9999999393939095e-1, 4.3453102392758411e-15},
	{"165", 1e-3, 9.9999393639939349e-1, 4.3481701828358457e-9},
	{"165", 0.5, 9.9608375322354587e-1, 1.5186149241918489e-3},
	{"165", 1, 9.8969350085896979e-1, 8.576335383447474e-3},
	{"165", 4, 7.54809681486245e-1, 1.0355232938903596},
	{"165", 8, 5.2464929795518673e-2, 6.6872002214159397},
	{"165", 14, 1.371835308365974e-4, 7.3633714830207166},
	{"165", 20, 3.4009023274193475e-7, 7.3663119731153137},
	{"165", 64, 2.6462879694052525e-26, 7.3663222142458158},
	{"165", 1000, 8.3753321809566037e-433, 7.3663222142458158},
	{"969", 1e-6, 9.9999999896800774e-1, 7.4365694031938222e-16},
	{"969", 1e-3, 9.9999896749315409e-1, 7.441513780851294e-10},
	{"969", 0.5, 9.9933097290135133e-1, 2.6100258944089436e-4},
	{"969", 1, 9.9822988619806102e-1, 1.483951067569978e-3},
	{"969", 4, 9.4758630256527745e-1, 2.3044042810954092e-1},
	{"969", 8, 2.4538118743722169e-1, 6.6854977858835903},
	{"969", 14, 8.0510328523595154e-4, 9.9029475909657207},
	{"969", 20, 1.9972538752286086e-6, 9.9202924078645383},
	{"969", 64, 1.5540927529416301e-25, 9.9203528554150811},
	{"969", 1000, 4.9186041717254236e-432, 9.9203528554150811},
	{"2925", 1e-6, 9.9999999965811949e-1, 2.4653038848307274e-16},
	{"2925", 1e-3, 9.9999965794877795e-1, 2.4669452686881869e-10},
	{"2925", 0.5, 9.9977826412788943e-1, 8.657576048339098e-5},
	{"2925", 1, 9.9941289811215258e-1, 4.9269076044062021e-4},
	{"2925", 4, 9.8200557868722646e-1, 7.9582389874005013e-2},
	{"2925", 8, 4.9534645401691832e-1, 4.8129537290489152},
	{"2925", 14, 2.4263221679834087e-3, 1.1461727965384877e+1},
	{"2925", 20, 6.0288380109523247e-6, 1.1514038318508775e+1},
	{"2925", 64, 4.6911468548547657e-25, 1.1514220909358129e+1},
	{"2925", 1000, 1.4847179775332161e-431, 1.1514220909358129e+1},
	{"100000", 1e-6, 9.9999999999e-1, 7.2134078785337763e-18},
	{"100000", 1e-3, 9.9999998999499843e-1, 7.2182137126173543e-12},
	{"100000", 0.5, 9.9999351282937665e-1, 2.5338936086747139e-6},
	{"100000", 1, 9.9998281747695958e-1, 1.4426489545050919e-5},
	{"100000", 4, 9.9946430562194503e-1, 2.3760006778978258e-3},
	{"100000", 8, 9.7106273836879303e-1, 2.917296399410707e-1},
	{"100000", 14, 7.676934429358478e-2, 1.4943853681798317e+1},
	{"100000", 20, 2.060728878806695e-4, 1.6603397199231967e+1},
	{"100000", 64, 1.6038108905486379e-23, 1.6609640474436812e+1},
	{"100000", 1000, 5.0759588975494568e-430, 1.6609640474436812e+1},
	{"4294967295", 1e-6, 9.9999999999999977e-1, 1.6795191945112513e-22},
	{"4294967295", 1e-3, 9.9999999999976705e-1, 1.6806381735396583e-16},
	{"4294967295", 0.5, 9.9999999984895781e-1, 5.8997897504687974e-11},
	{"4294967295", 1, 9.9999999959993134e-1, 3.3590361479479203e-10},
	{"4294967295", 4, 9.9999998752070838e-1, 5.5355050724562384e-8},
	{"4294967295", 8, 9.9999930617494505e-1, 7.0095326419744978e-6},
	{"4294967295", 14, 9.9972007548289813e-1, 5.2499424320251541e-3},
	{"4294967295", 20, 8.9850381856890868e-1, 2.7741572986309379},
	{"4294967295", 64, 6.8883153222712242e-19, 3.1999999999664096e+1},
	{"4294967295", 1000, 2.1801077455739172e-425, 3.1999999999664096e+1},
	{"1000000000000000000000000000000", 1e-6, 1.0, 7.2134800134300894e-43},
	{"1000000000000000000000000000000", 1e-3, 1.0, 7.2182859917642469e-37},
	{"1000000000000000000000000000000", 0.5, 1.0, 2.5339404036535087e-31},
	{"1000000000000000000000000000000", 1, 1.0, 1.4426950408889634e-30},
	{"1000000000000000000000000000000", 4, 1.0, 2.3774813592447532e-28},
	{"1000000000000000000000000000000", 8, 1.0, 3.0105735830065027e-26},
	{"1000000000000000000000000000000", 14, 1.0, 2.2554887522607529e-23},
	{"1000000000000000000000000000000", 20, 1.0, 1.3298963008605652e-20},
	{"1000000000000000000000000000000", 64, 9.9380348710089547e-1, 5.6317192874256934e-1},
	{"1000000000000000000000000000000", 1000, 5.0759588975494568e-405, 9.965784284662087e+1},
}

// FlipProbability and InformationGain are within a few ulps of the
// 80-digit values at every k and ε: relative 1e-13, plus 1e-14/ε for the
// gain, whose two terms cancel at small ε (ε = 1e-6: 1e-8, measured
// 9e-9 at worst; ε = 1e-3: 4e-12).
func TestChannelHighPrecision(t *testing.T) {
	for _, tc := range highPrecision {
		k, _ := new(big.Int).SetString(tc.k, 10)
		if got := FlipProbability(k, tc.eps); math.Abs(got-tc.p) > 1e-13*tc.p {
			t.Errorf("k=%s ε=%v: p %v, want %v", tc.k, tc.eps, got, tc.p)
		}
		if got := InformationGain(k, tc.eps); math.Abs(got-tc.g) > (1e-13+1e-14/tc.eps)*tc.g {
			t.Errorf("k=%s ε=%v: %v bits, want %v (relative error %.1e)", tc.k, tc.eps, got, tc.g, math.Abs(got-tc.g)/tc.g)
		}
	}
}

// Where the repository's formula, as written, is well conditioned (a gain
// of at least 1% of log2 k) InformationGain agrees with it to 1e-12
// (relative), and FlipProbability everywhere to 1e-14; Chromium's default navigation source gives the 11.4617280
// bits its cap rounds up.
func TestChannelMatchesReference(t *testing.T) {
	for _, k := range []int64{2, 3, 10, 165, 969, 2925, 100000, 1 << 32} {
		for _, eps := range []float64{0.5, 1, 2, 4, 8, 14, 20} {
			kb := big.NewInt(k)
			want := referenceGain(float64(k), eps)
			if want < 0.01*math.Log2(float64(k)) {
				continue // its terms of size log2 k cancel: TestChannelHighPrecision
			}
			if got := InformationGain(kb, eps); math.Abs(got-want) > 1e-12*want {
				t.Errorf("k=%d ε=%v: %v bits, the reference %v", k, eps, got, want)
			}
			if got, want := FlipProbability(kb, eps), float64(k)/(float64(k)+math.Exp(eps)-1); math.Abs(got-want) > 1e-14*want {
				t.Errorf("k=%d ε=%v: p %v, want %v", k, eps, got, want)
			}
		}
	}
	if got := InformationGain(big.NewInt(2925), 14); math.Abs(got-11.46172797) > 1e-8 || got > Chromium.NavigationInfoGain {
		t.Errorf("navigation default %v bits, want 11.4617280 ≤ the cap %v", got, Chromium.NavigationInfoGain)
	}
}

// The channel at its limits: k = 1 carries nothing and flips with
// probability e^−ε; ε → 0 flips always and carries ≈ ε²(k−1)/(2k²·ln 2)
// bits (the χ² expansion of the capacity); ε → ∞ never flips and carries
// log2 k; every gain lies in [0, min(log2 k, ε·log2 e)] (ε-DP bounds the
// mutual information by ε nats); p rises with k and falls with ε; k of
// 10^600, beyond float64, still gives finite answers.
func TestChannelLimits(t *testing.T) {
	one := big.NewInt(1)
	for _, eps := range []float64{1e-9, 0.1, 1, 14, 700, 1e6} {
		if g := InformationGain(one, eps); g != 0 {
			t.Errorf("k=1 ε=%v: %v bits", eps, g)
		}
		if p, want := FlipProbability(one, eps), math.Exp(-eps); math.Abs(p-want) > 1e-15*want {
			t.Errorf("k=1 ε=%v: p %v, want e^-ε %v", eps, p, want)
		}
	}
	for _, k := range []int64{2, 3, 2925, 1 << 40} {
		kb := big.NewInt(k)
		kf := float64(k)
		for _, eps := range []float64{1e-6, 1e-4} {
			want := eps * eps * (kf - 1) / (2 * kf * kf * math.Ln2)
			if g := InformationGain(kb, eps); math.Abs(g-want) > 2*eps*want+1e-300 {
				t.Errorf("k=%d ε=%v: %v bits, small-ε expansion %v", k, eps, g, want)
			}
		}
		if p := FlipProbability(kb, 1e-12); math.Abs(p-1) > 1e-11 {
			t.Errorf("k=%d ε→0: p %v, want 1", k, p)
		}
		for _, eps := range []float64{800, 1e5} {
			if g, want := InformationGain(kb, eps), math.Log2(kf); math.Abs(g-want) > 1e-12*want {
				t.Errorf("k=%d ε=%v: %v bits, want log2 k %v", k, eps, g, want)
			}
			if p := FlipProbability(kb, eps); p != 0 {
				t.Errorf("k=%d ε=%v: p %v, want 0", k, eps, p)
			}
		}
		prevP, prevG := 2.0, -1.0
		for eps := 0.01; eps < 60; eps *= 1.3 {
			p, g := FlipProbability(kb, eps), InformationGain(kb, eps)
			if !(p < prevP) || !(g >= prevG) {
				t.Fatalf("k=%d ε=%v: p %v (before %v), gain %v (before %v): not monotone", k, eps, p, prevP, g, prevG)
			}
			if g < 0 || g > math.Log2(kf)+1e-12 || g > eps/math.Ln2*(1+1e-12) {
				t.Fatalf("k=%d ε=%v: gain %v outside [0, min(log2 k, ε log2 e)]", k, eps, g)
			}
			prevP, prevG = p, g
		}
	}
	for k := int64(1); k < 5000; k = k*3 + 1 {
		if a, b := FlipProbability(big.NewInt(k), 14), FlipProbability(big.NewInt(k+1), 14); !(a < b) {
			t.Fatalf("p(k=%d) = %v ≥ p(k=%d) = %v", k, a, k+1, b)
		}
	}
	huge := new(big.Int).Exp(big.NewInt(10), big.NewInt(600), nil)
	if g, p := InformationGain(huge, 14), FlipProbability(huge, 14); math.IsNaN(g) || math.IsInf(g, 0) || g < 0 || p != 1 {
		t.Errorf("k=10^600: gain %v, p %v", g, p)
	}
	if g, want := InformationGain(huge, 3000), 600*math.Log2(10); math.Abs(g-want) > 1e-9*want {
		t.Errorf("k=10^600 ε=3000: %v bits, want log2 k %v", g, want)
	}
}

func TestChannelRefusesBadArguments(t *testing.T) {
	cases := []struct {
		name string
		k    *big.Int
		eps  float64
	}{
		{"k = 0", big.NewInt(0), 1}, {"k < 0", big.NewInt(-3), 1}, {"nil k", nil, 1},
		{"ε = 0", big.NewInt(3), 0}, {"ε < 0", big.NewInt(3), -1}, {"ε NaN", big.NewInt(3), math.NaN()}, {"ε = +Inf", big.NewInt(3), math.Inf(1)},
	}
	for _, tc := range cases {
		if p, g := FlipProbability(tc.k, tc.eps), InformationGain(tc.k, tc.eps); !math.IsNaN(p) || !math.IsNaN(g) {
			t.Errorf("%s: p %v, gain %v, want NaN", tc.name, p, g)
		}
	}
}

func TestLnBig(t *testing.T) {
	for _, s := range []string{"1", "2", "2925", "18446744073709551615", "18446744073709551616", "123456789012345678901234567890"} {
		k, _ := new(big.Int).SetString(s, 10)
		f, _ := new(big.Float).SetInt(k).Float64()
		if got, want := lnBig(k), math.Log(f); math.Abs(got-want) > 1e-15*want {
			t.Errorf("ln %s = %v, want %v", s, got, want)
		}
	}
	if !math.IsInf(lnBig(new(big.Int)), -1) {
		t.Error("ln 0 is not −Inf")
	}
}

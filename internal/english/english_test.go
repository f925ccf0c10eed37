package english

import (
	"fmt"
	"testing"
)

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  string
		want string
	}{
		{"zero", Count(0, "release"), "0 releases"},
		{"one", Count(1, "release"), "1 release"},
		{"two", Count(2, "release"), "2 releases"},
		{"many", Count(1999, "run"), "1999 runs"},
		{"minus one", Count(-1, "model"), "-1 model"},
		{"irregular one", CountAs(1, "class", "classes"), "1 class"},
		{"irregular many", CountAs(3, "class", "classes"), "3 classes"},
		{"noun one", Noun(1, "person", "people"), "person"},
		{"noun many", Noun(11, "person", "people"), "people"},
		{"thousands small", Thousands(999), "999"},
		{"thousands", Thousands(1999), "1,999"},
		{"thousands millions", Thousands(54686452), "54,686,452"},
		{"thousands negative", Thousands(-1234567), "-1,234,567"},
		{"thousands negative small", Thousands(-123), "-123"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

func ExampleCount() {
	fmt.Println(Count(1, "release") + ", " + Count(2, "release"))
	// Output: 1 release, 2 releases
}

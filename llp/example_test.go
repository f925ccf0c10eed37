package llp_test

import (
	"fmt"
	"math/rand/v2"

	"labelprivacy/llp"
)

func ExamplePartition() {
	// 10 rows in bags of 3, seeded; the remainder row is kept as a bag of 1.
	bags, err := llp.Partition(10, 3, rand.NewPCG(1, 2), true)
	if err != nil {
		panic(err)
	}
	for b := range bags.NumBags {
		fmt.Println(b, bags.Size(b), bags.Members(b))
	}
	fmt.Println("dropped:", bags.Dropped)
	// Output:
	// 0 3 [2 4 3]
	// 1 3 [9 0 1]
	// 2 3 [8 6 5]
	// 3 1 [7]
	// dropped: 0
}

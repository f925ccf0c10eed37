package report

// BagsOf is the bag rule of a run's setting: its Bags, or "random" for an
// LLP-family run recorded before bag rules existed; "" outside the LLP
// family.
func BagsOf(r Run) string {
	if r.Bags == "" && r.Pet.IsLLP() {
		return "random"
	}
	return r.Bags
}

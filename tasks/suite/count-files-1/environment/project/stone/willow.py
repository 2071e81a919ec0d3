willow

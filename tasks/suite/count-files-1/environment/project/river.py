river

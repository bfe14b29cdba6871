# Azure Data Explorer (Kusto) for the benchmark: a resource group, a cluster with
# streaming ingestion enabled, one database, and admin rights on that database for the
# service principal (Azure AD application) that the benchmark workers authenticate as.
#
#   az login
#   terraform init
#   terraform apply -var 'subscription_id=...' -var 'service_principal_name=...'
#
# See variables.tf for every setting (SKU, capacity, names) and dbinstall/README.md for
# the Kubernetes Secret that hands the application's credentials to the benchmark.

terraform {
  required_version = ">= 1.5.0"
  required_providers {
    azurerm = {
      source  = "hashicorp/azurerm"
      version = "~> 4.0"
    }
    azuread = {
      source  = "hashicorp/azuread"
      version = "~> 3.0"
    }
  }
}

provider "azurerm" {
  features {}
  subscription_id = var.subscription_id
}

provider "azuread" {}

data "azurerm_client_config" "current" {}

# The application the benchmark uses; it must exist already (its secret is created in
# Azure AD, never in this configuration).
data "azuread_service_principal" "benchmark" {
  display_name = var.service_principal_name
}

resource "azurerm_resource_group" "adx" {
  name     = var.resource_group_name
  location = var.location
  tags     = var.tags
}

resource "azurerm_kusto_cluster" "adx" {
  name                        = var.cluster_name
  location                    = azurerm_resource_group.adx.location
  resource_group_name         = azurerm_resource_group.adx.name
  streaming_ingestion_enabled = true
  tags                        = var.tags

  sku {
    name     = var.sku_name
    capacity = var.sku_capacity
  }
}

resource "azurerm_kusto_database" "benchmark" {
  name                = var.database_name
  resource_group_name = azurerm_resource_group.adx.name
  location            = azurerm_resource_group.adx.location
  cluster_name        = azurerm_kusto_cluster.adx.name
  hot_cache_period    = var.hot_cache_period
  soft_delete_period  = var.soft_delete_period
}

resource "azurerm_kusto_database_principal_assignment" "benchmark" {
  name                = "iotdb-bench-admin"
  resource_group_name = azurerm_resource_group.adx.name
  cluster_name        = azurerm_kusto_cluster.adx.name
  database_name       = azurerm_kusto_database.benchmark.name

  tenant_id      = data.azurerm_client_config.current.tenant_id
  principal_id   = data.azuread_service_principal.benchmark.client_id
  principal_type = "App"
  role           = "Admin"
}
